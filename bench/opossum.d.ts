// The few parts of opossum 10 that bench/run.ts uses (the package ships no types).
declare module "opossum" {
  namespace CircuitBreaker {
    interface Options {
      timeout?: number | false;
      errorThresholdPercentage?: number;
      resetTimeout?: number;
      rollingCountTimeout?: number;
      rollingCountBuckets?: number;
      capacity?: number;
      errorFilter?: (error: unknown) => boolean;
      coalesce?: boolean;
      coalesceTTL?: number;
      coalesceResetOn?: ("error" | "success" | "timeout")[];
    }
  }
  class CircuitBreaker<A extends unknown[] = unknown[], R = unknown> {
    constructor(action: (...args: A) => Promise<R>, options?: CircuitBreaker.Options);
    fire(...args: A): Promise<R>;
    open(): void;
    shutdown(): void;
  }
  export default CircuitBreaker;
}

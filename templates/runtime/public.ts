// The runtime's public surface, re-exported by the output's index.ts: what code that uses
// generated clients names (docs/runtime.md, "Public surface").
//
// Everything a generated client's or middleware's signature refers to is here, with the error
// guards, events, deadlines and the test doubles. The building blocks behind them (breaker,
// bulkhead, windows, settings literals, sendHttp) stay in index.ts, the runtime's full index,
// which generated modules import.
export {
  describesRequest,
  isAbortedError,
  isBudgetExhaustedError,
  isBulkheadFullError,
  isCircuitOpenError,
  isDeadlineError,
  isDependencyFailure,
  isHttpError,
  isNetworkError,
  isParseError,
  isRateLimitedError,
  isResilienceError,
  isTimeoutError,
  networkError,
  ResilienceError,
  type HttpError,
  type ResilienceErrorInit,
  type ResilienceErrorKind,
  type ResilienceErrorOf,
  type TimeoutTier,
} from "./errors.js";
export type {
  AttemptOutcome,
  BreakerStateName,
  ChaosFaultKind,
  CallOutcome,
  DeadlineStage,
  Observer,
  ReconfigurationSource,
  ResilienceEvent,
} from "./events.js";
export {
  overridesVariable,
  ReconfigurationError,
  type BreakerChange,
  type BulkheadChange,
  type OperationChange,
  type RateLimitChange,
  type Reconfiguration,
  type ReconfigureResult,
  type RetryChange,
  type TimeoutChange,
} from "./reconfigure.js";
export { consoleLogger, logEvents, silentLogger, type LogFields, type Logger } from "./logger.js";
export { systemClock, type Clock, type TimerHandle } from "./clock.js";
export { createVirtualClock, type VirtualClock } from "./virtual-clock.js";
export { createSeededRandom, type Random } from "./random.js";
export {
  currentDeadline,
  currentSignal,
  Deadline,
  deadlineFromHeader,
  withDeadline,
  type DeadlineFormat,
  type DeadlineLike,
} from "./deadline.js";
export type {
  AttemptError,
  AttemptResult,
  Classifier,
  ClassifyContext,
  FunctionAttemptResult,
  HttpAttemptResult,
  ResultCondition,
  Verdict,
} from "./classify.js";
export type {
  CallHeaders,
  CallOptions,
  Dependency,
  DependencyHealth,
  HttpCallOptions,
  ProvidedCallOptions,
} from "./stack.js";
export type { CallResult, Degraded, Fresh, Outcome } from "./fallback.js";
export type { HeaderSource } from "./http.js";
export type { BasicCredentials, CredentialSource } from "./auth.js";
export type {
  BreakerControl,
  BreakerHealth,
  BreakerIsolation,
  BreakerSnapshot,
} from "./breaker.js";
export { SnapshotError, type DependencySnapshot, type SnapshotProblem } from "./snapshot.js";
export {
  createMemoryStore,
  createRedisStore,
  StoreFullError,
  StoreUnavailableError,
  type MemoryStoreOptions,
  type RedisScriptClient,
  type SharedStore,
  type StoreOptions,
  type StoreScript,
  type TtlMap,
} from "./store.js";
export type {
  IdempotencyEvent,
  IdempotencyOutcome,
  RouteIdempotencySettings,
  RouteSettings,
} from "./idempotent-route.js";
export type { BulkheadHealth } from "./bulkhead.js";
export type { GradientLimitHealth } from "./adaptive-limit.js";
export type {
  HeaderLookup,
  PauseSource,
  RateLimitHealth,
  SharedRateLimitHealth,
} from "./rate-limit.js";
export type { EndpointHealth, EndpointSettings } from "./endpoints.js";
export type { BudgetHealth, BudgetSnapshot } from "./budget.js";
export type { WindowCounts, WindowSnapshot } from "./window.js";
export type { AttemptContext, Transport } from "./transport.js";
export type { RetryCondition } from "./retry.js";
export {
  CHAOS_KILL_SWITCH,
  type ChaosControl,
  type ChaosFault,
  type ChaosOptions,
} from "./chaos.js";
export type {
  ExpressMiddleware,
  FastifyLike,
  FastifyReplyLike,
  FastifyRequestLike,
  InboundDeadlineSettings,
  InboundEvent,
  InboundHealth,
  InboundMiddleware,
  InboundObserver,
  InboundOptions,
  InboundRequest,
  InboundResponse,
  PriorityRule,
  RejectionSettings,
  ServiceSettings,
  ShedEvent,
} from "./inbound.js";
export type {
  AdmissionHealth,
  AdmissionSettings,
  Priority,
  Reserve,
  ShedCause,
  ShedReason,
} from "./admission.js";

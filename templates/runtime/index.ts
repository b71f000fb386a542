// The runtime's full index, for generated clients and the runtime's own tests; users import
// docs/runtime.md's public surface from public.ts.
export {
  AdmissionGate,
  defaultReserve,
  PRIORITIES,
  type AdmissionHealth,
  type AdmissionSettings,
  type Priority,
  type Reserve,
  type ShedCause,
  type ShedReason,
} from "./admission.js";
export {
  applyAuth,
  type AuthCredentials,
  type AuthParts,
  type AuthRequirement,
  type AuthScheme,
  type BasicCredentials,
  type CredentialSource,
  type HttpAuth,
} from "./auth.js";
export {
  Chaos,
  CHAOS_KILL_SWITCH,
  chaosKilled,
  chaosProblems,
  NO_CHAOS,
  type ChaosControl,
  type ChaosFault,
  type ChaosOptions,
} from "./chaos.js";
export { backoffDelay, exponentialDelay, type BackoffSettings, type Jitter } from "./backoff.js";
export {
  CircuitBreaker,
  REJECTED,
  type BreakerControl,
  type BreakerHealth,
  type BreakerIsolation,
  type BreakerSettings,
  type BreakerSnapshot,
  type BreakerState,
  type BreakerTransitionListener,
  type Permit,
  type TransitionTrigger,
} from "./breaker.js";
export {
  combinedState,
  DEFAULT_ENDPOINTS,
  Endpoint,
  endpointList,
  EndpointPool,
  firstEndpoint,
  MAX_ENDPOINTS,
  type EndpointHealth,
  type EndpointSettings,
} from "./endpoints.js";
export {
  exhaustedResetMs,
  RateLimiter,
  type HeaderLookup,
  type PauseListener,
  type PauseSource,
  type RateLimitHealth,
  type RateLimitSettings,
  type SharedGrant,
  type SharedPermits,
  type SharedRateLimitHealth,
} from "./rate-limit.js";
export { StorePermits, STORE_RETRY_MS, type LocalShareListener } from "./shared-rate-limit.js";
export {
  RetryBudget,
  type BudgetHealth,
  type BudgetSettings,
  type BudgetSnapshot,
} from "./budget.js";
export { Bulkhead, type BulkheadHealth, type BulkheadSettings } from "./bulkhead.js";
export {
  GradientLimit,
  type GradientLimitHealth,
  type GradientLimitSettings,
} from "./adaptive-limit.js";
export {
  isNetworkFailure,
  isProgrammingError,
  matchesErrorCondition,
  matchesResult,
  NETWORK_ERROR_CODES,
  type AttemptError,
  type AttemptResult,
  type Classifier,
  type ClassifyContext,
  type ErrorCondition,
  type FunctionAttemptResult,
  type HttpAttemptResult,
  type ResultCondition,
  type Verdict,
} from "./classify.js";
export { sleep, systemClock, type Clock, type TimerHandle } from "./clock.js";
export {
  currentDeadline,
  Deadline,
  deadlineFromHeader,
  decodeTimeout,
  encodeTimeout,
  currentScope,
  currentSignal,
  inheritSignal,
  withDeadline,
  withDeadlineAndSignal,
  withRequestScope,
  type AmbientScope,
  type DeadlineFormat,
  type DeadlineLike,
} from "./deadline.js";
export {
  abortedError,
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
  resilienceErrorBrand,
  type HttpError,
  type ResilienceErrorInit,
  type ResilienceErrorKind,
  type ResilienceErrorOf,
  type TimeoutTier,
} from "./errors.js";
export {
  Emitter,
  type AttemptOutcome,
  type BreakerStateName,
  type CallOutcome,
  type ChaosFaultKind,
  type DeadlineStage,
  type Observer,
  type ReconfigurationSource,
  type ResilienceEvent,
} from "./events.js";
export {
  ALWAYS_VARY,
  hasFallback,
  requestIdentity,
  serveFallback,
  SHARE_EVERY_MS,
  StaleCache,
  staleKey,
  type CallResult,
  type SharedStale,
  type StaleHit,
  type Degraded,
  type FallbackSettings,
  type Fresh,
  type Outcome,
  type RequestIdentity,
  type StaleMiss,
} from "./fallback.js";
export { MAX_SHARED_BYTES, plainJson, StoreStale, type StoreStaleOptions } from "./shared-stale.js";
export { HedgeBudget, type HedgeSettings } from "./hedge-budget.js";
export {
  buildUrl,
  DEFAULT_MAX_RESPONSE_BYTES,
  httpIdentity,
  MAX_REDIRECTS,
  mergeHeaders,
  pathSegment,
  sendHttp,
  type HeaderSource,
  type HttpRequest,
  type QueryValue,
} from "./http.js";
export { newIdempotencyKey, type IdempotencySettings } from "./idempotency.js";
export {
  readIdempotencyKey,
  REPLAYED_HEADER,
  routeMatches,
  type IdempotencyEvent,
  type IdempotencyOutcome,
  type RouteIdempotencySettings,
  type RouteSettings,
} from "./idempotent-route.js";
export {
  createInboundMiddleware,
  inboundBudget,
  priorityOf,
  type ExpressMiddleware,
  type FastifyLike,
  type FastifyReplyLike,
  type FastifyRequestLike,
  type InboundDeadlineSettings,
  type InboundEvent,
  type InboundHealth,
  type InboundMiddleware,
  type InboundObserver,
  type InboundOptions,
  type InboundRequest,
  type InboundResponse,
  type PriorityRule,
  type RejectionSettings,
  type ServiceSettings,
  type ShedEvent,
} from "./inbound.js";
export {
  problemAnswer,
  PROBLEM_TITLES,
  PROBLEM_TYPE_BASE,
  type ProblemAnswer,
  type ProblemKind,
} from "./problem.js";
export { consoleLogger, logEvents, silentLogger, type LogFields, type Logger } from "./logger.js";
export { createSeededRandom, defaultRandom, type Random } from "./random.js";
export {
  operationWorstCaseMs,
  rangeProblem,
  overridesVariable,
  RECONFIGURABLE,
  ReconfigurationError,
  validateReconfiguration,
  type BreakerChange,
  type BulkheadChange,
  type EffectiveSettings,
  type OperationChange,
  type RateLimitChange,
  type ReconfigurableLeaf,
  type Reconfiguration,
  type ReconfigurationVerdict,
  type ReconfigureResult,
  type RetryChange,
  type TimeoutChange,
} from "./reconfigure.js";
export {
  DEFAULT_RETRY_ON,
  matchesRetryOn,
  parseRetryAfter,
  retryDelay,
  type RetryCondition,
  type RetryDelay,
  type RetrySettings,
} from "./retry.js";
export {
  createDependency,
  type CallHeaders,
  type CallOptions,
  type CallOptionsFor,
  type DeadlineSettings,
  type Dependency,
  type DependencyHealth,
  type DependencySettings,
  type HttpCallOptions,
  type LiveOperations,
  type ProvidedCallOptions,
  type RuntimeEnvironment,
} from "./stack.js";
export { controlOf } from "./stack.js";
export type { OperationRetrySettings, OperationSettings, TimeoutSettings } from "./operation.js";
export type { AttemptContext, Transport } from "./transport.js";
export {
  checkedResponse,
  checkedResult,
  expectedType,
  isJsonObject,
  missingProperty,
  noAlternative,
  notAllowed,
  propertyPath,
  unexpectedProperty,
  type Validator,
} from "./validate.js";
export { createVirtualClock, type VirtualClock } from "./virtual-clock.js";
export {
  CountWindow,
  createWindow,
  TimeWindow,
  type CountWindowSettings,
  type OutcomeWindow,
  type TimeWindowSettings,
  type WindowCounts,
  type WindowSettings,
  type WindowSnapshot,
} from "./window.js";
export {
  restoreSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  SnapshotError,
  takeSnapshot,
  type DependencySnapshot,
  type SnapshotProblem,
} from "./snapshot.js";
export {
  createMemoryStore,
  createRedisStore,
  keySegment,
  MemoryStore,
  RedisStore,
  StoreFullError,
  StoreUnavailableError,
  TtlMap,
  type MemoryStoreOptions,
  type RedisScriptClient,
  type SharedStore,
  type StoreOptions,
  type StoreScript,
} from "./store.js";

// The integrators' client of both interfaces (clients/README.md, docs/adr/0034-client-package.md).
export { createManagementClient, type ManagementClient, type ManagementClientOptions, type EventEnvelope, type EventSubject } from './management-client.ts';
export type { CollectionPath, CollectionParams, ItemOf, PageOf } from './management-client.ts';
export { createDataClient, type DataClient, type DataClientOptions } from './data-client.ts';
export { ApiProblem, UnexpectedResponse, failureOf, isProblem, type ErrorCode, type ProblemBody, type ValidationIssue } from './problem.ts';
export { EventFeed, type EventFeedOptions } from './event-feed.ts';
export { DEFAULT_RETRY, NO_RETRY, backoffDelay, decideRetry, parseRetryAfter, type RetryPolicy } from './retry-policy.ts';
export { TokenSession, renewAt, type TokenEvent, type Tokens } from './token-session.ts';
export type { ClientEvent, CommonOptions } from './options.ts';
export type { RetryEvent } from './transport.ts';
export type { Middleware } from 'openapi-fetch';

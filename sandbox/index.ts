/**
 * The sandbox portal's public face: what tests and benches import, and what the bridge loads at run time in
 * sandbox mode (src/sandbox-mode.ts requires the built dist/sandbox/index.js). Nothing here imports src/:
 * the sandbox stands in for the vendor's server and is built on its own (sandbox/tsconfig.json).
 */
export { SandboxPortal } from './sandbox-portal';
export type { SandboxOptions } from './sandbox-portal';
export { PortalEndpoint } from './portal-endpoint';
export { SandboxTenant, TENANT_PREFIX } from './tenant-portals';
export type { TenantOptions, TenantSummary } from './tenant-portals';
export { defaultSeed, WEBHOOK_SCOPES, OAUTH_SCOPES } from './seed';
export type { SandboxSeed, EmployeeSeed, CrmSeedRecord, PhoneSeed, WebhookSeed, OAuthAppSeed } from './seed';
export type { FaultSpec, ActiveFault } from './faults';
export { Inspection } from './inspection';
export type { CallView, CallQuery } from './inspection';
export type { RequestLogEntry, RequestStats } from './request-log';
export type { TokenAnswer } from './oauth-server';
export type { InstallOutcome } from './app-install';
export { SandboxControls } from './controls';
export { PortalState } from './portal-state';
export { SandboxPortalError } from './sandbox-portal-error';
export { TELEPHONY_ERRORS } from './methods/telephony';
export { TRANSCRIPT_ERRORS } from './methods/transcripts';
export type { PortalTranscript, TranscriptMessage } from './transcript-store';

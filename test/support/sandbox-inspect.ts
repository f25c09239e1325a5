import axios from 'axios';
import { PortalTranscript, SandboxPortal } from '../../sandbox';

/** The sandbox's test-only inspection and fault API, over real HTTP. */

export interface SandboxCall {
  CALL_ID: string;
  EXTERNAL_CALL_ID?: string;
  USER_ID: number;
  PHONE_NUMBER: string;
  TYPE: number;
  CALL_START_DATE: string;
  CRM_CREATE: boolean;
  SHOW: boolean;
  CRM_ENTITY_TYPE?: string;
  CRM_ENTITY_ID?: number;
  CRM_CREATED_LEAD?: number | null;
  LINE_NUMBER?: string;
  registerRequests: number;
  finished: null | { DURATION: number; STATUS_CODE: string; FAILED_REASON?: string };
  records: { RECORD_URL?: string }[];
}

export async function sandboxCalls(sandbox: SandboxPortal): Promise<SandboxCall[]> {
  const { data } = await axios.get(`${sandbox.url}/_sandbox/calls`);
  return Array.isArray(data) ? data : data.calls;
}

export async function callsByExternalId(sandbox: SandboxPortal, externalId: string): Promise<SandboxCall[]> {
  return (await sandboxCalls(sandbox)).filter((call) => call.EXTERNAL_CALL_ID === externalId);
}

export async function sandboxStats(sandbox: SandboxPortal): Promise<{
  requests: number;
  byStatus: Record<string, number>;
  queryLimitExceeded: number;
  maxRequestsInAnySecond: number;
  commands: number;
  tokenRefreshes: number;
  refreshTokenReuse: number;
  operationTimeLimited: number;
  codeExchanges: number;
}> {
  const { data } = await axios.get(`${sandbox.url}/_sandbox/stats`);
  return data;
}

export async function injectFault(sandbox: SandboxPortal, fault: Record<string, unknown>): Promise<void> {
  await axios.post(`${sandbox.url}/_sandbox/faults`, fault);
}

export async function clearFaults(sandbox: SandboxPortal): Promise<void> {
  await axios.delete(`${sandbox.url}/_sandbox/faults`);
}

export async function sandboxLeads(sandbox: SandboxPortal): Promise<{ ID: number; TITLE: string }[]> {
  const { data } = await axios.get(`${sandbox.url}/_sandbox/leads`);
  return Array.isArray(data) ? data : data.leads;
}

/** The transcripts the portal holds, oldest first: all, or one CALL_ID's (a repeat attach is a second one). */
export async function sandboxTranscripts(
  sandbox: SandboxPortal,
  callId?: string,
): Promise<PortalTranscript[]> {
  const { data } = await axios.get(`${sandbox.url}/_sandbox/transcripts`, {
    params: callId === undefined ? {} : { CALL_ID: callId },
  });
  return data;
}

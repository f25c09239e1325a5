import axios from 'axios';
import { SandboxPortal } from '../../sandbox';
import { taskMarker } from '../../src/calls/missed-call-task';
import { eventually, PBX_TOKEN } from '../support/bridge-harness';

/** A task as the sandbox shows it (`GET /_sandbox/tasks`, tasks.task.* camelCase fields). */
export interface SandboxTask {
  id: string;
  title: string;
  description: string;
  responsibleId: string;
  deadline: string;
  status: string;
  xmlId: string;
  ufCrmTask: string[];
  closedDate: string | null;
}

/** The tasks the sandbox holds for one bridge call: those carrying the call's marker. */
export async function tasksOfCall(sandbox: SandboxPortal, callId: string): Promise<SandboxTask[]> {
  const { data } = await axios.get(`${sandbox.url}/_sandbox/tasks`, {
    params: { xmlId: taskMarker('sandbox', callId) },
  });
  return data;
}

/** Posts PBX events to a bridge at `url`; expects 202. */
export async function postEvents(url: string, events: unknown[]): Promise<void> {
  const response = await axios.post(`${url}/v1/calls/events`, events, {
    headers: { Authorization: `Bearer ${PBX_TOKEN}` },
  });
  if (response.status !== 202) throw new Error(`intake answered ${response.status}`);
}

/** `GET /v1/calls/:callId` of a bridge at `url`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function callStatus(url: string, callId: string): Promise<any> {
  const { data } = await axios.get(`${url}/v1/calls/${encodeURIComponent(callId)}`, {
    headers: { Authorization: `Bearer ${PBX_TOKEN}` },
  });
  return data;
}

/** Waits until the call's status satisfies `done`, and returns it. */
export function statusWhen(
  url: string,
  callId: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  done: (status: any) => boolean,
  timeoutMs?: number,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any> {
  return eventually(async () => {
    const status = await callStatus(url, callId);
    return done(status) ? status : undefined;
  }, timeoutMs);
}

/** An inbound call that rang at `at` and ended at `endAt` with `status`, from `phone`, on extension 101. */
export function inboundCall(
  callId: string,
  phone: string,
  status: string,
  times: { at?: string; endAt?: string } = {},
): unknown[] {
  const at = times.at ?? '2026-11-22T10:00:00+01:00';
  return [
    { event: 'call.started', callId, direction: 'inbound', phoneNumber: phone, extension: '101', at },
    {
      event: 'call.ended',
      callId,
      at: times.endAt ?? '2026-11-22T10:00:40+01:00',
      durationSec: status === 'answered' ? 30 : 0,
      status,
    },
  ];
}

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { eventually, Harness, PBX_TOKEN } from '../support/bridge-harness';
import { callsByExternalId, SandboxCall } from '../support/sandbox-inspect';

/** Helpers shared by the adapter specs: fixtures as the PBXs post them, and waiting for delivery. */

const FIXTURES = resolve(__dirname, '../fixtures');

/** A fixture file as text, exactly as the PBX posts it. */
export function fixtureText(path: string): string {
  return readFileSync(resolve(FIXTURES, path), 'utf8').trim();
}

export function fixtureJson<T extends object = Record<string, unknown>>(path: string): T {
  return JSON.parse(fixtureText(path)) as T;
}

/** A form fixture as fields, to change one before posting it again under another call id. */
export function fixtureForm(path: string): URLSearchParams {
  return new URLSearchParams(fixtureText(path));
}

export const basic = (user = 'pbx') => `Basic ${Buffer.from(`${user}:${PBX_TOKEN}`).toString('base64')}`;

export async function callStatus(
  h: Harness,
  callId: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await h.http
    .get(`/v1/calls/${encodeURIComponent(callId)}`)
    .set('Authorization', `Bearer ${PBX_TOKEN}`);
  return { status: response.status, body: response.body };
}

/** Waits until the call is finished on the portal (and its recording attached, when it has one). */
export async function finishedOnPortal(
  h: Harness,
  callId: string,
  withRecording = false,
): Promise<SandboxCall> {
  await eventually(async () => {
    const { body } = await callStatus(h, callId);
    const done = body.state === 'finished' && (!withRecording || body.recording === 'attached');
    return done ? body : undefined;
  });
  const calls = await callsByExternalId(h.sandbox, callId);
  expect(calls).toHaveLength(1);
  return calls[0];
}

/** The fields a 400 names. */
export function namedFields(body: { errors?: { field: string }[] }): string[] {
  return (body.errors ?? []).map((error) => error.field);
}

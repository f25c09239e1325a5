import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { PortalClick } from '../../src/clicks/click';
import { DialStore } from '../../src/store/dial-store';
import { AmiServer } from '../support/ami-server';
import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { injectFault } from '../support/sandbox-inspect';
import { onPostgres } from '../support/test-database';

const SECRET = 'ami-replicas-secret';
/** Longer than a dial request's claim (15 s): the replica asking the portal would lose an unrenewed claim. */
const SLOW_LOOKUP_MS = 20_000;
/** A dial request's claim (the dialer's CLAIM_MS). */
const CLAIM_MS = 15_000;

/**
 * Two bridges on one database (one SQLite file, or one PostgreSQL schema), both dialling through one AMI
 * double: a click is dialled exactly once, even when the replica that claimed it waits on the portal longer
 * than its claim, and even when that wait ends in a failure after the click could have been dialled.
 */
describe(`click-to-call across replicas, a lookup slower than the claim (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let sandbox: SandboxPortal;
  let ami: AmiServer;
  let dir: string;
  let replicas: Harness[] = [];

  beforeEach(async () => {
    sandbox = await SandboxPortal.start();
    ami = await AmiServer.start('crm', SECRET);
    dir = mkdtempSync(join(tmpdir(), 'bridge-dial-replicas-'));
    const env = {
      DIAL_MODE: 'ami',
      AMI_URL: ami.url(),
      DIAL_TIMEOUT_SEC: '90',
      // The slow lookup is answered, not timed out by the bridge.
      B24_TIMEOUT_MS: '40000',
    };
    replicas = [await startHarness(env, {}, { sandbox, dir }), await startHarness(env, {}, { sandbox, dir })];
  });
  afterEach(async () => {
    for (const replica of replicas) await replica.close();
    await ami.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A callback for the seeded contact 2 (responsible: user 3, extension 102): its lookup asks the portal. */
  function callback(portalCallId: string): PortalClick {
    return {
      portalId: 'sandbox',
      kind: 'callback',
      portalCallId,
      phoneNumber: '+4930555777',
      crmEntityType: 'CONTACT',
      crmEntityId: 2,
      clickedAt: Date.now(),
    };
  }

  const originatesOf = (callId: string) =>
    ami.originates().filter((action) => action.Variable === `CRM_CALL_ID=${callId}`);

  async function dialledOnce(callId: string): Promise<void> {
    const store = replicas[1].app.get(DialStore);
    await eventually(
      async () => ((await store.find('sandbox', callId))?.state === 'sent' ? true : undefined),
      60_000,
    );
    // The slow lookup (the first, sent within the claim) has been answered: the sandbox logs it then.
    await eventually(
      async () =>
        sandbox
          .requests(started)
          .some((entry) => entry.method === 'crm.contact.get' && entry.at < started + CLAIM_MS)
          ? true
          : undefined,
      60_000,
    );
    // Bounded observation: a replica dialling on that late answer would do so at once; nothing marks
    // that it chose not to.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(originatesOf(callId)).toHaveLength(1);
    expect(originatesOf(callId)[0]).toMatchObject({ Channel: 'PJSIP/102', Exten: '+4930555777' });
    expect(await store.find('sandbox', callId)).toMatchObject({ state: 'sent', extension: '102', userId: 3 });
  }

  let started = 0;

  it('the replica waiting on the portal keeps its claim: exactly one Originate', async () => {
    await injectFault(sandbox, { kind: 'latency', ms: SLOW_LOOKUP_MS, method: 'crm.contact.get', times: 1 });
    const callId = 'externalCall.5a0e1.1732269000';
    started = sandbox.state.now();
    await replicas[0].app.get(PortalRuntime).bus.publish(callback(callId));
    await dialledOnce(callId);
  }, 90_000);

  it('a slow lookup that fails late never resets the request: exactly one Originate', async () => {
    // The first lookup's answer is an error, held back past the claim: a failure arriving late.
    await injectFault(sandbox, {
      kind: 'http',
      status: 503,
      error: 'INTERNAL_SERVER_ERROR',
      method: 'crm.contact.get',
      times: 1,
    });
    await injectFault(sandbox, { kind: 'latency', ms: SLOW_LOOKUP_MS, method: 'crm.contact.get', times: 1 });
    const callId = 'externalCall.1a7ef.1732269000';
    started = sandbox.state.now();
    await replicas[0].app.get(PortalRuntime).bus.publish(callback(callId));
    await dialledOnce(callId);
  }, 90_000);
});

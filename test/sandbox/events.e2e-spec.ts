import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import * as qs from 'qs';
import { SandboxPortal } from '../../sandbox';
import { eventually } from '../support/bridge-harness';
import { request } from './http';

/** The sandbox portal's events: bindings (OAuth only), online posts, the offline queue, lines, controls. */
describe('sandbox portal events', () => {
  let portal: SandboxPortal;
  let receiver: Server;
  let receiverUrl: string;
  const received: Record<string, unknown>[] = [];
  let token: string;

  const call = (method: string, form: Record<string, unknown> = {}) =>
    request(`${portal.url}/rest/${method}?auth=${token}`, { form });

  beforeAll(async () => {
    portal = await SandboxPortal.start();
    receiver = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push(qs.parse(body) as Record<string, unknown>);
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
    token = portal.issueTokens()!.access_token;
  });
  afterAll(async () => {
    await portal.close();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('event.bind works only with OAuth; a webhook is refused', async () => {
    const hook = await request(`${portal.webhookUrl}event.bind`, {
      form: { event: 'ONEXTERNALCALLSTART', handler: receiverUrl },
    });
    expect(hook.status).toBe(400);
    expect(
      (await call('event.bind', { event: 'onexternalcallstart', handler: receiverUrl })).body.result,
    ).toBe(true);
    expect((await call('event.bind', { event: 'ONEXTERNALCALLSTART', handler: receiverUrl })).status).toBe(
      400,
    );
    expect((await call('event.get')).body.result).toEqual([
      { event: 'ONEXTERNALCALLSTART', handler: receiverUrl, auth_type: '0', offline: 0 },
    ]);
  });

  it('a click registers the call like externalcall.register and posts the event form-encoded with the application token', async () => {
    const click = await request(`${portal.url}/_sandbox/click`, {
      json: { phone: '+49 151 1234-5678', userId: 1, lineNumber: 'pbx-bridge' },
    });
    expect(click.status).toBe(200);
    const callId = click.body.CALL_ID as string;
    expect(portal.calls().filter((item) => item.CALL_ID === callId)).toHaveLength(1);
    const post = await eventually(async () =>
      received.find((item) => (item.data as { CALL_ID?: string })?.CALL_ID === callId),
    );
    expect(post).toMatchObject({
      event: 'ONEXTERNALCALLSTART',
      data: { USER_ID: '1', PHONE_NUMBER: '+49 151 1234-5678', LINE_NUMBER: 'pbx-bridge', IS_MOBILE: '0' },
      auth: { application_token: 'sandbox0application0token0000001' },
    });
    // The portal's call is there to finish.
    const finish = await call('telephony.externalcall.finish', { CALL_ID: callId, USER_ID: 1, DURATION: 5 });
    expect(finish.status).toBe(200);
  });

  it('offline events: clear=0 marks them for one process_id, another reader does not get them, clear removes them', async () => {
    await call('event.bind', { event: 'ONCRMCONTACTADD', event_type: 'offline' });
    for (const name of ['A', 'B', 'C']) {
      expect(
        (await request(`${portal.url}/_sandbox/crm/contact`, { json: { fields: { NAME: name } } })).status,
      ).toBe(200);
    }
    expect((await call('event.offline.list')).body.total).toBe(3);
    const first = await call('event.offline.get', { clear: 0, process_id: 'p1', limit: 2 });
    expect(first.body.result.process_id).toBe('p1');
    expect(first.body.result.events).toHaveLength(2);
    const other = await call('event.offline.get', { clear: 0, process_id: 'p2', limit: 50 });
    expect(other.body.result.events).toHaveLength(1);
    const again = await call('event.offline.get', { clear: 0, process_id: 'p1' });
    expect(again.body.result.events.map((event: { ID: number }) => event.ID)).toEqual(
      first.body.result.events.map((event: { ID: number }) => event.ID),
    );
    await call('event.offline.clear', { process_id: 'p1', id: [first.body.result.events[0].ID] });
    expect((await call('event.offline.list')).body.total).toBe(2);
    await call('event.offline.get', { process_id: 'p3' });
    expect((await call('event.offline.list')).body.total).toBe(2);
  });

  it('crm.*.add/update/delete fire the change events', async () => {
    await call('event.unbind', { event: 'ONCRMCONTACTADD' });
    for (const event of ['ONCRMLEADADD', 'ONCRMLEADUPDATE', 'ONCRMLEADDELETE']) {
      await call('event.bind', { event, handler: receiverUrl });
    }
    const added = await request(`${portal.webhookUrl}crm.lead.add`, {
      form: { fields: { TITLE: 'Hooked' } },
    });
    const id = String(added.body.result);
    await request(`${portal.webhookUrl}crm.lead.update`, { form: { id, fields: { TITLE: 'Changed' } } });
    await request(`${portal.webhookUrl}crm.lead.delete`, { form: { id } });
    const events = await eventually(async () => {
      const mine = received.filter((item) => (item.data as { FIELDS?: { ID?: string } })?.FIELDS?.ID === id);
      return mine.length === 3 ? mine.map((item) => item.event) : undefined;
    });
    expect(events.sort()).toEqual(['ONCRMLEADADD', 'ONCRMLEADDELETE', 'ONCRMLEADUPDATE']);
  });

  it('lines: add is idempotent by NUMBER, get lists them, delete removes', async () => {
    await call('telephony.externalLine.add', { NUMBER: 'pbx-bridge', NAME: 'PBX bridge' });
    await call('telephony.externalLine.add', { NUMBER: 'pbx-bridge', NAME: 'PBX bridge' });
    expect((await call('telephony.externalLine.get')).body.result).toEqual([
      { NUMBER: 'pbx-bridge', NAME: 'PBX bridge', CRM_AUTO_CREATE: 'Y' },
    ]);
    const inspected = await request(`${portal.url}/_sandbox/events`);
    expect(inspected.body.lines).toHaveLength(1);
    expect(inspected.body.bindings.length).toBeGreaterThanOrEqual(2);
    expect((await call('telephony.externalLine.delete', { NUMBER: 'pbx-bridge' })).body.result).toBe(true);
    expect((await call('telephony.externalLine.get')).body.result).toEqual([]);
  });

  it('a re-install drops the application handlers', async () => {
    await portal.installApp(receiverUrl);
    expect((await call('event.get')).body.result).toEqual([]);
  });
});

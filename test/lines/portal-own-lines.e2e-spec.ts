import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { ADMIN_TOKEN, ended, eventually, started } from '../support/bridge-harness';
import { install, MultiBridge, pbxTokenFor, startMultiBridge, tempDir } from '../support/multi-harness';

/**
 * Many portals (SPEC §8, §11): each portal has its own lines, set through the admin API and checked as LINES
 * is (a 400 naming the line and the field); one portal's rules never touch another's calls.
 */
describe("each portal's own lines (multi mode)", () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let alpha: SandboxTenant;
  let beta: SandboxTenant;
  let alphaToken: string;
  let betaToken: string;
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const post = (token: string, body: object) =>
    bridge.http.post('/v1/calls/events').set('Authorization', `Bearer ${token}`).send(body);
  const state = async (token: string, callId: string) =>
    (await bridge.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${token}`)).body.state;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
    beta = sandbox.addPortal({ name: 'beta' });
    temp = tempDir();
    bridge = await startMultiBridge(sandbox, temp.dir);
    expect(await install(alpha, bridge.url)).toBe(200);
    expect(await install(beta, bridge.url)).toBe(200);
    alphaToken = await pbxTokenFor(bridge, alpha.memberId);
    betaToken = await pbxTokenFor(bridge, beta.memberId);
  });
  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    temp?.remove();
  });

  it('refuses bad rules with a 400 naming the line and the field, and stores nothing', async () => {
    const bad = await bridge.http
      .patch(`/v1/admin/portals/${alpha.memberId}`)
      .set(admin)
      .send({ lines: [{ number: '+49 30 1111111', report: 'no' }, { number: 'a b' }] });
    expect(bad.status).toBe(400);
    const text = JSON.stringify(bad.body);
    expect(text).toContain('lines[0] (+49 30 1111111): report must be true or false');
    expect(text).toContain('lines[1] (a b): number must be');
    const stored = await bridge.http.get(`/v1/admin/portals/${alpha.memberId}`).set(admin);
    expect(stored.body.settings).toEqual({});
  });

  it("a portal's rule acts on its own calls only", async () => {
    const ok = await bridge.http
      .patch(`/v1/admin/portals/${alpha.memberId}`)
      .set(admin)
      .send({ lines: [{ number: '+49 30 1111111', report: false, name: 'Test line' }] });
    expect(ok.status).toBe(200);
    expect(ok.body.settings.lines).toEqual([{ number: '+49 30 1111111', name: 'Test line', report: false }]);
    const call = (callId: string) => [started(callId, { line: '+49 30 1111111' }), ended(callId)];
    expect((await post(alphaToken, call('a-ignored'))).status).toBe(202);
    expect((await post(betaToken, call('b-reported'))).status).toBe(202);
    await eventually(async () => ((await state(alphaToken, 'a-ignored')) === 'ignored' ? true : undefined));
    await eventually(async () => ((await state(betaToken, 'b-reported')) === 'finished' ? true : undefined));
    expect(alpha.calls()).toEqual([]);
    expect(beta.calls().map((item) => item.LINE_NUMBER)).toEqual(['+49301111111']);
  });
});

import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { defaultSeed } from '../../sandbox';
import { Harness, startHarness } from '../support/bridge-harness';
import { basic, callStatus, finishedOnPortal, fixtureForm, namedFields } from './adapter-support';

/** An employee whose internal number is longer than PBX_INTERNAL_MAX_DIGITS: internal only by the directory. */
const LONG_EXTENSION = { ID: 6, NAME: 'Lena', LAST_NAME: 'Lang', EMAIL: 'lena@sandbox.test', ACTIVE: true };

/**
 * POST /v1/pbx/asterisk without `direction` (Asterisk's CDR has none, most dialplans add none): the bridge
 * infers it from which of src and dst is an employee's internal number, says which rule decided in the
 * call's status, and refuses only a call it cannot tell (both sides internal, or neither).
 */
describe('Asterisk CDR without direction', () => {
  let h: Harness;

  beforeAll(async () => {
    const seed = defaultSeed();
    seed.employees.push({ ...LONG_EXTENSION, UF_PHONE_INNER: '7001234' });
    h = await startHarness({}, { seed: { employees: seed.employees } });
    // The directory rule needs the directory's first copy; the digit rule works without it.
    await h.app.get(PortalRuntime).directory.whenLoaded();
  });
  afterAll(async () => {
    await h.close();
  });

  const post = (harness: Harness, form: URLSearchParams) =>
    harness.http
      .post('/v1/pbx/asterisk?tz=Europe/Berlin')
      .set('Authorization', basic('asterisk'))
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send(form.toString());

  /** The outbound fixture as another call, with no direction and no extension: only src and dst to go by. */
  const cdr = (linkedid: string, src: string, dst: string) => {
    const form = fixtureForm('asterisk/outbound-no-answer.txt');
    form.set('linkedid', linkedid);
    form.set('uniqueid', linkedid);
    form.set('src', src);
    form.set('dst', dst);
    form.delete('direction');
    form.delete('extension');
    return form;
  };

  it("src an employee's internal number (the directory), dst outside: outbound", async () => {
    const response = await post(h, cdr('dir-out-1', '101', '0221555090909'));
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ accepted: 1, duplicates: 0, callId: 'dir-out-1' });
    const call = await finishedOnPortal(h, 'dir-out-1');
    expect(call).toMatchObject({ TYPE: 1, USER_ID: 2, PHONE_NUMBER: '+49221555090909' });
    expect((await callStatus(h, 'dir-out-1')).body.directionInferred).toBe(
      "src 101 is an employee's internal number, dst is outside: outbound",
    );
  });

  it('an internal number longer than PBX_INTERNAL_MAX_DIGITS counts when the directory knows it', async () => {
    expect((await post(h, cdr('dir-out-2', '7001234', '+4989555070707'))).status).toBe(202);
    const call = await finishedOnPortal(h, 'dir-out-2');
    expect(call).toMatchObject({ TYPE: 1, USER_ID: LONG_EXTENSION.ID, PHONE_NUMBER: '+4989555070707' });
    expect((await callStatus(h, 'dir-out-2')).body.directionInferred).toBe(
      "src 7001234 is an employee's internal number, dst is outside: outbound",
    );
  });

  it('a short number the directory does not know is internal by its digits', async () => {
    expect((await post(h, cdr('dir-out-3', '104', '0221555090909'))).status).toBe(202);
    const call = await finishedOnPortal(h, 'dir-out-3');
    // No employee has 104: the call goes to B24_DEFAULT_USER_ID, as for any unknown extension.
    expect(call).toMatchObject({ TYPE: 1, USER_ID: 1, PHONE_NUMBER: '+49221555090909' });
    const { body } = await callStatus(h, 'dir-out-3');
    expect(body).toMatchObject({
      directionInferred: 'src 104 is a short number (at most 6 digits), dst is outside: outbound',
      routedToDefaultUser: true,
    });
  });

  it('src outside, dst internal: inbound', async () => {
    expect((await post(h, cdr('dir-in-1', '015112345678', '102'))).status).toBe(202);
    const call = await finishedOnPortal(h, 'dir-in-1');
    expect(call).toMatchObject({ TYPE: 2, USER_ID: 3, PHONE_NUMBER: '+4915112345678' });
    expect((await callStatus(h, 'dir-in-1')).body.directionInferred).toBe(
      "dst 102 is an employee's internal number, src is outside: inbound",
    );
  });

  it('a direction the dialplan sets is kept, and the status infers nothing', async () => {
    const form = cdr('dir-set-1', '101', '0221555090909');
    form.set('direction', 'outbound');
    expect((await post(h, form)).status).toBe(202);
    await finishedOnPortal(h, 'dir-set-1');
    expect((await callStatus(h, 'dir-set-1')).body).not.toHaveProperty('directionInferred');
  });

  it.each([
    ['both sides internal', '101', '102', 'both src and dst are internal numbers (src 101, dst 102)'],
    [
      'neither side internal',
      '030555060606',
      '4930123456',
      "neither src nor dst is an employee's internal number (src 030555060606, dst 4930123456)",
    ],
  ])('%s: a 400 naming src and dst, nothing stored', async (_case, src, dst, why) => {
    const callId = `dir-bad-${src}`;
    const response = await post(h, cdr(callId, src, dst));
    expect(response.status).toBe(400);
    expect(namedFields(response.body)).toEqual(['src', 'dst']);
    expect(response.body.errors[0].problems[0]).toContain(why);
    expect((await callStatus(h, callId)).status).toBe(404);
  });

  describe('with PBX_INTERNAL_MAX_DIGITS=15', () => {
    let wide: Harness;

    beforeAll(async () => {
      wide = await startHarness({ PBX_INTERNAL_MAX_DIGITS: '15' }, {}, { sandbox: h.sandbox });
    });
    afterAll(async () => {
      await wide.close();
    });

    it.each([
      ['E.164 without +', 'dir-wide-1', '4989555070707'],
      ['E.164 with 00', 'dir-wide-2', '004989555070707'],
      ['E.164 with +', 'dir-wide-3', '+4989555070707'],
    ])('an international number written as %s is never internal', async (_form, callId, dst) => {
      const response = await post(wide, cdr(callId, '103', dst));
      expect(response.status).toBe(202);
      const { body } = await callStatus(wide, callId);
      expect(body.directionInferred).toMatch(/^src 103 is .*, dst is outside: outbound$/);
      const call = await finishedOnPortal(wide, callId);
      expect(call).toMatchObject({ TYPE: 1, PHONE_NUMBER: '+4989555070707' });
    });
  });
});

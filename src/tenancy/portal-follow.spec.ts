import { loadConfig } from '../config/app-config';
import { followView, portalFollowSettings } from './portal-follow';

const SECRET = 'very-s3cret-pass';

describe('portalFollowSettings: a portal follow setting checked like the environment', () => {
  const dev = { production: false };
  const prod = { production: true };

  it('accepts AMI over tls:// anywhere and builds its settings', () => {
    const built = portalFollowSettings(
      { PBX_EVENTS: 'ami', AMI_URL: `tls://crm:${SECRET}@pbx.example.com:5039`, PBX_TRUNKS: 'PJSIP/trunk*' },
      prod,
    );
    expect(built).toEqual({
      settings: { mode: 'ami', amiUrl: `tls://crm:${SECRET}@pbx.example.com:5039`, trunks: ['PJSIP/trunk*'] },
    });
  });

  it('accepts FreeSWITCH (esl) and the CDR ledger per portal, and shows back neither secret', () => {
    const esl = portalFollowSettings({ PBX_EVENTS: 'esl', ESL_URL: `tcp://:${SECRET}@10.0.0.7:8021` }, prod);
    expect(esl).toEqual({ settings: expect.objectContaining({ mode: 'esl' }) });
    const ledger = {
      PBX_EVENTS: 'ami',
      AMI_URL: `tls://crm:${SECRET}@pbx.example.com:5039`,
      ASTERISK_CDR_URL: `mysql://cdr:${SECRET}@db.example.com:3306/asteriskcdrdb?ssl=true`,
    };
    expect(portalFollowSettings(ledger, prod)).toEqual({
      settings: expect.objectContaining({ mode: 'ami', cdrUrl: ledger.ASTERISK_CDR_URL }),
    });
    const shown = JSON.stringify(followView(ledger));
    expect(shown).toContain('db.example.com');
    expect(shown).not.toContain(SECRET);
    const refused = portalFollowSettings(
      { PBX_EVENTS: 'esl', ESL_URL: `tcp://:${SECRET}@pbx.example.com:8021` },
      prod,
    );
    expect(JSON.stringify(refused)).toContain('follow.ESL_URL');
    expect(JSON.stringify(refused)).not.toContain(SECRET);
  });

  it.each([
    [{ PBX_EVENTS: 'ami' }, 'follow.AMI_URL: required when PBX_EVENTS=ami'],
    [{ PBX_EVENTS: 'sip', AMI_URL: 'tcp://a:b@10.0.0.5' }, 'follow.PBX_EVENTS'],
    [{ PBX_EVENTS: 'ami', AMI_URL: `http://crm:${SECRET}@pbx` }, 'follow.AMI_URL'],
    [{ AMI_URL: 'tcp://a:b@10.0.0.5' }, 'follow.PBX_EVENTS: required'],
    [
      { PBX_EVENTS: 'ami', AMI_URL: 'tcp://a:b@10.0.0.5', DIAL_MODE: 'ami' },
      'follow.DIAL_MODE: not a follow setting',
    ],
    [{ PBX_EVENTS: 'ami', AMI_URL: 5038 }, 'follow.AMI_URL: must be a text'],
    [{ PBX_EVENTS: 'ami', AMI_URL: 'tcp://a:b@10.0.0.5', PBX_TRUNKS: 'a b' }, 'follow.PBX_TRUNKS'],
  ])('%j is refused naming the field, never the secret', (follow, problem) => {
    const built = portalFollowSettings(follow, dev);
    expect('problems' in built && built.problems.join(' | ')).toContain(problem);
    expect(JSON.stringify(built)).not.toContain(SECRET);
  });

  it('in production refuses plaintext tcp:// to a public or named host, allows it to a private address', () => {
    for (const host of ['pbx.example.com', '203.0.113.7']) {
      const built = portalFollowSettings(
        { PBX_EVENTS: 'ami', AMI_URL: `tcp://crm:${SECRET}@${host}:5038` },
        prod,
      );
      expect('problems' in built && built.problems[0]).toMatch(
        /^follow\.AMI_URL: plaintext tcp:\/\/ .* refused in production/,
      );
      expect(JSON.stringify(built)).not.toContain(SECRET);
      // Outside production (a developer's or an on-premise bridge) it is accepted.
      expect(
        'settings' in
          portalFollowSettings({ PBX_EVENTS: 'ami', AMI_URL: `tcp://crm:${SECRET}@${host}:5038` }, dev),
      ).toBe(true);
    }
    for (const host of ['10.1.2.3', '192.168.1.10', '172.20.0.4', '100.100.1.1', '127.0.0.1'])
      expect(
        'settings' in
          portalFollowSettings({ PBX_EVENTS: 'ami', AMI_URL: `tcp://crm:${SECRET}@${host}:5038` }, prod),
      ).toBe(true);
  });

  it('shows the source, the address and the trunks, never the secret', () => {
    const view = followView({
      PBX_EVENTS: 'ami',
      AMI_URL: `tls://crm:${SECRET}@pbx.example.com:5039`,
      PBX_TRUNKS: 'PJSIP/t*',
    });
    expect(view).toEqual({ PBX_EVENTS: 'ami', target: 'tls://pbx.example.com:5039', PBX_TRUNKS: 'PJSIP/t*' });
  });

  it('multi mode still refuses the deployment-wide PBX_EVENTS, pointing at the portal setting', () => {
    const multi = {
      B24_APP_MODE: 'multi',
      B24_CLIENT_ID: 'app',
      B24_CLIENT_SECRET: 'secret',
      B24_OAUTH_URL: 'https://oauth.example.com',
    };
    expect(() => loadConfig(multi)).not.toThrow();
    expect(() =>
      loadConfig({ ...multi, PBX_EVENTS: 'ami', AMI_URL: `tls://crm:${SECRET}@pbx:5039` }),
    ).toThrow(
      /PBX_EVENTS: not used with B24_APP_MODE=multi \(a PBX is followed for one portal: PATCH \/v1\/admin\/portals\/:portalId \{"follow": …\}\)/,
    );
  });
});

import { BlockList } from 'node:net';
import { allowedNetworksOf, EgressPolicy } from '../common/egress';
import { loadConfig } from '../config/app-config';
import { followSettingsOf } from '../config/settings';
import { followDestinations, followView, portalFollowSettings } from './portal-follow';

const SECRET = 'very-s3cret-pass';

/** The tenant rule (SPEC §8) with TENANT_ALLOWED_NETWORKS: `allowed` (a VPN's range). */
const tenants = (...allowed: string[]) =>
  EgressPolicy.forTenants(allowedNetworksOf(allowed) as BlockList, ['bridge.example.com']);

describe('portalFollowSettings: a portal follow setting checked like the environment', () => {
  // A hosted deployment whose operator reaches customers' PBXs over a VPN in 10.20.0.0/16.
  const dev = { production: false, egress: tenants('10.20.0.0/16', '127.0.0.0/8') };
  const prod = { production: true, egress: tenants('10.20.0.0/16') };

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
    const esl = portalFollowSettings({ PBX_EVENTS: 'esl', ESL_URL: `tcp://:${SECRET}@10.20.0.7:8021` }, prod);
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

  it.each([
    ['AMI_URL', 'ami', (host: string) => `tcp://crm:${SECRET}@${host}:5038`],
    ['ESL_URL', 'esl', (host: string) => `tls://:${SECRET}@${host}:8021`],
    [
      'ASTERISK_CDR_URL',
      'ami',
      (host: string) => `mysql://cdr:${SECRET}@${host}:3306/asteriskcdrdb?ssl=true`,
    ],
  ])(
    '%s at this deployment or its network is refused naming the variable, never the secret',
    (variable, mode, url) => {
      for (const host of [
        '127.0.0.1',
        '10.0.0.5',
        '169.254.169.254',
        '[::1]',
        '[::ffff:127.0.0.1]',
        '[fd00::5]',
        '192.168.1.10',
        '100.100.1.1',
        'bridge.example.com',
      ]) {
        const follow: Record<string, string> = {
          PBX_EVENTS: mode,
          ...(variable === 'ASTERISK_CDR_URL' && { AMI_URL: `tls://crm:${SECRET}@pbx.example.com:5039` }),
          [variable]: url(host),
        };
        const built = portalFollowSettings(follow, prod);
        expect('problems' in built && built.problems).toEqual([
          expect.stringMatching(new RegExp(`^follow\\.${variable}: `)),
        ]);
        expect(JSON.stringify(built)).not.toContain(SECRET);
      }
    },
  );

  it('credentials in clear only to an address TENANT_ALLOWED_NETWORKS allows; TLS anywhere public', () => {
    const ami = (url: string) => portalFollowSettings({ PBX_EVENTS: 'ami', AMI_URL: url }, prod);
    for (const host of ['pbx.example.com', '203.0.113.7']) {
      const built = ami(`tcp://crm:${SECRET}@${host}:5038`);
      expect('problems' in built && built.problems[0]).toMatch(
        /^follow\.AMI_URL: .*credentials travel only over TLS/,
      );
      expect(JSON.stringify(built)).not.toContain(SECRET);
      expect('settings' in ami(`tls://crm:${SECRET}@${host}:5039`)).toBe(true);
    }
    // The VPN the operator allowed: plaintext to a literal address of it.
    expect('settings' in ami(`tcp://crm:${SECRET}@10.20.1.2:5038`)).toBe(true);
    // Also when PUBLIC_URL names an address of it (the bridge on that VPN); never the deployment's name.
    const vpn = EgressPolicy.forTenants(allowedNetworksOf(['10.20.0.0/16']) as BlockList, ['10.20.0.1']);
    const onVpn = (host: string) =>
      portalFollowSettings(
        { PBX_EVENTS: 'ami', AMI_URL: `tls://crm:${SECRET}@${host}:5039` },
        { production: true, egress: vpn },
      );
    expect('settings' in onVpn('10.20.0.1')).toBe(true);
    expect(JSON.stringify(ami(`tls://crm:${SECRET}@bridge.example.com:5039`))).toContain(
      'follow.AMI_URL: bridge.example.com:5039 is this deployment itself',
    );
    // MySQL's TLS upgrade counts as TLS; ?ssl=false does not.
    const ledger = (query: string) =>
      portalFollowSettings(
        {
          PBX_EVENTS: 'ami',
          AMI_URL: `tls://crm:${SECRET}@pbx.example.com:5039`,
          ASTERISK_CDR_URL: `mysql://cdr:${SECRET}@db.example.com:3306/asteriskcdrdb${query}`,
        },
        prod,
      );
    expect('settings' in ledger('?ssl=true')).toBe(true);
    expect('settings' in ledger('?ssl=required')).toBe(true);
    // `mysqls://` (SPEC §8) is the same TLS upgrade.
    const mysqls = portalFollowSettings(
      {
        PBX_EVENTS: 'ami',
        AMI_URL: `tls://crm:${SECRET}@pbx.example.com:5039`,
        ASTERISK_CDR_URL: `mysqls://cdr:${SECRET}@db.example.com:3306/asteriskcdrdb`,
      },
      prod,
    );
    expect('settings' in mysqls).toBe(true);
    for (const query of ['', '?ssl=false', '?ssl=0', '?ssl=off', '?ssl=disabled']) {
      expect(JSON.stringify(ledger(query))).toMatch(/follow\.ASTERISK_CDR_URL: .*only over TLS/);
    }
  });

  it('reads a password with any character, written plainly or percent-encoded', () => {
    for (const secret of ['Ab/cd#e?f@g', 'Ab%2Fcd%23e%3Ff%40g']) {
      expect(
        portalFollowSettings(
          { PBX_EVENTS: 'ami', AMI_URL: `tls://crm-bridge:${secret}@pbx.example.com:5039` },
          prod,
        ),
      ).toEqual({ settings: expect.objectContaining({ mode: 'ami' }) });
    }
    const refused = portalFollowSettings(
      { PBX_EVENTS: 'ami', AMI_URL: 'tls://crm-bridge:Ab/cd#e@pbx.example.com:99999' },
      prod,
    );
    expect('problems' in refused && refused.problems.join(' | ')).toMatch(/^follow\.AMI_URL: /);
    expect(JSON.stringify(refused)).not.toContain('Ab/cd#e');
  });

  it('followDestinations: what the save path resolves now (checkNow), one per address set', async () => {
    const resolving = (address: string) =>
      EgressPolicy.forTenants(new BlockList(), [], (_name, _options, callback) =>
        callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]),
      );
    const settings = followSettingsOf(
      loadConfig({
        PBX_EVENTS: 'ami',
        AMI_URL: `tls://crm:${SECRET}@pbx.example.com:5039`,
        ASTERISK_CDR_URL: `mysql://cdr:${SECRET}@db.example.com/asteriskcdrdb?ssl=true`,
      }),
    );
    const hostile = resolving('127.0.0.1');
    const destinations = followDestinations(settings, hostile);
    expect(destinations.map((destination) => [destination.variable, destination.label])).toEqual([
      ['AMI_URL', 'pbx.example.com:5039'],
      ['ASTERISK_CDR_URL', 'db.example.com:3306'],
    ]);
    const refusals = await Promise.all(destinations.map((destination) => hostile.checkNow(destination)));
    expect(refusals).toEqual([
      expect.stringMatching(/^AMI_URL: pbx\.example\.com:5039 resolves to an address in a range/),
      expect.stringMatching(/^ASTERISK_CDR_URL: db\.example\.com:3306 resolves to an address in a range/),
    ]);
    expect(JSON.stringify(refusals)).not.toContain(SECRET);
    const fine = resolving('203.0.113.7');
    for (const destination of followDestinations(settings, fine)) {
      expect(await fine.checkNow(destination)).toBeUndefined();
    }
    const esl = followSettingsOf(
      loadConfig({ PBX_EVENTS: 'esl', ESL_URL: `tls://:${SECRET}@fs.example.com` }),
    );
    expect(followDestinations(esl, fine).map((destination) => destination.label)).toEqual([
      'fs.example.com:8021',
    ]);
    // Settings the policy refuses were never saved: a caller that skipped portalFollowSettings learns it.
    const plain = followSettingsOf(
      loadConfig({ PBX_EVENTS: 'ami', AMI_URL: `tcp://crm:${SECRET}@127.0.0.1` }),
    );
    expect(() => followDestinations(plain, fine)).toThrow(/^AMI_URL: 127\.0\.0\.1:5038 is in a range/);
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

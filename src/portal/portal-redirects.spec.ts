import { RedirectPolicy, registrableDomain } from './portal-redirects';

describe('registrableDomain', () => {
  it.each([
    ['portal.example.com', 'example.com'],
    ['a.b.example.com', 'example.com'],
    ['example.com', 'example.com'],
    ['company.bitrix24.de', 'bitrix24.de'],
    ['crm.example.co.uk', 'example.co.uk'],
    ['crm.shop.com.br', 'shop.com.br'],
    ['portal.firm.com.au', 'firm.com.au'],
    ['crm.firm.com.ru', 'firm.com.ru'],
    ['Portal.Example.COM.', 'example.com'],
    ['10.0.0.7', '10.0.0.7'],
    ['localhost', 'localhost'],
  ])('%s → %s', (host, domain) => expect(registrableDomain(host)).toBe(domain));
});

describe('RedirectPolicy', () => {
  const judge = (from: string, to: string, allowed: string[] = []) =>
    new RedirectPolicy(allowed).judge(new URL(from), new URL(to));

  it('follows a move within the registrable domain over https, or an upgrade to https', () => {
    expect(judge('https://old.bitrix24.de/rest/', 'https://new.bitrix24.de/rest/')).toEqual({ follow: true });
    expect(judge('https://example.com/rest/', 'https://crm.example.com/rest/')).toEqual({ follow: true });
    expect(judge('http://crm.example.com/rest/', 'https://crm.example.com/rest/')).toEqual({ follow: true });
    expect(judge('http://127.0.0.1:3000/rest/', 'http://127.0.0.1:4000/rest/')).toEqual({ follow: true });
  });

  it('never downgrades https to http, not even on the same host', () => {
    expect(judge('https://crm.example.com/rest/', 'http://crm.example.com/rest/')).toEqual({
      follow: false,
      reason: 'it would downgrade https to http',
    });
    expect(judge('https://crm.example.com/', 'http://x.example.org/', ['*.example.org']).follow).toBe(false);
  });

  it('refuses another site, an IP address and a look-alike suffix unless B24_ALLOWED_DOMAINS names them', () => {
    const refused = judge('https://crm.example.com/', 'https://evil.example.net/');
    expect(refused).toEqual({
      follow: false,
      reason: 'evil.example.net is outside example.com and not in B24_ALLOWED_DOMAINS',
    });
    expect(judge('https://crm.example.com/', 'https://169.254.169.254/').follow).toBe(false);
    expect(judge('https://crm.example.com/', 'https://crm.example.com.evil.io/').follow).toBe(false);
    expect(judge('https://a.example.co.uk/', 'https://b.other.co.uk/').follow).toBe(false);
    expect(judge('https://crm.example.com/', 'ftp://crm.example.com/').follow).toBe(false);
  });

  it('follows hosts of B24_ALLOWED_DOMAINS: *.domain for hosts under it, else the exact host', () => {
    const allowed = ['*.crm-hosting.org', 'portal.example.net'];
    expect(judge('https://crm.example.com/', 'https://eu.crm-hosting.org/', allowed).follow).toBe(true);
    expect(judge('https://crm.example.com/', 'https://a.eu.crm-hosting.org/', allowed).follow).toBe(true);
    expect(judge('https://crm.example.com/', 'https://crm-hosting.org/', allowed).follow).toBe(false);
    expect(judge('https://crm.example.com/', 'https://evilcrm-hosting.org/', allowed).follow).toBe(false);
    expect(judge('https://crm.example.com/', 'https://portal.example.net/', allowed).follow).toBe(true);
    expect(judge('https://crm.example.com/', 'https://other.example.net/', allowed).follow).toBe(false);
  });
});

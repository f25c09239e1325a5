import { PortalAddress } from './portal-address';

describe('PortalAddress', () => {
  const portal = new PortalAddress('https://portal.example.com');

  it('recognises the configured portal by domain and endpoint, and nothing else', () => {
    expect(portal.isThisPortal('portal.example.com')).toBe(true);
    expect(portal.isThisPortal('PORTAL.example.com')).toBe(true);
    expect(portal.isThisPortal('portal.example.com.evil.test')).toBe(false);
    expect(portal.isThisPortalEndpoint('https://portal.example.com/rest/')).toBe(true);
    expect(portal.isThisPortalEndpoint('https://evil.test/rest/')).toBe(false);
    expect(portal.isThisPortalEndpoint('file://portal.example.com/rest/')).toBe(false);
    expect(portal.isThisPortalEndpoint('not a url')).toBe(false);
    expect(new PortalAddress('http://127.0.0.1:4100').isThisPortal('127.0.0.1:4100')).toBe(true);
  });

  it('calls {client_endpoint}{method} when the endpoint is this portal, else {B24_PORTAL_URL}/rest/', () => {
    expect(portal.restUrl('batch')).toBe('https://portal.example.com/rest/batch');
    expect(portal.restUrl('batch', 'https://portal.example.com/rest/')).toBe(
      'https://portal.example.com/rest/batch',
    );
    expect(portal.restUrl('batch', 'https://evil.test/rest/')).toBe('https://portal.example.com/rest/batch');
  });

  it('puts v1/ before the method with B24_API_VERSION=v1, and follows a move', () => {
    const v1 = new PortalAddress('https://portal.example.com/', 'v1');
    expect(v1.restUrl('app.info')).toBe('https://portal.example.com/rest/v1/app.info');
    expect(v1.restUrl('batch', undefined, 'https://moved.example.com')).toBe(
      'https://moved.example.com/rest/v1/batch',
    );
  });
});

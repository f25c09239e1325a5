import type { Request } from 'express';
import { redactUrl } from '../logging/logging.module';
import { presentedToken } from '../common/presented-token';

const request = (url: string, authorization?: string, token?: unknown) =>
  ({
    originalUrl: url,
    url,
    headers: authorization ? { authorization } : {},
    query: { token },
  }) as unknown as Request;

describe('presentedToken', () => {
  it('reads Bearer, and Basic with the token as password', () => {
    expect(presentedToken(request('/v1/calls/events', 'Bearer abc'))).toBe('abc');
    const basic = `Basic ${Buffer.from('any-user:abc').toString('base64')}`;
    expect(presentedToken(request('/v1/calls/events', basic))).toBe('abc');
  });

  it('reads ?token= on the adapter routes only, and never over an Authorization header', () => {
    expect(presentedToken(request('/v1/pbx/yeastar?token=abc', undefined, 'abc'))).toBe('abc');
    expect(presentedToken(request('/v1/calls/events?token=abc', undefined, 'abc'))).toBeUndefined();
    expect(presentedToken(request('/v1/lookup?token=abc', undefined, 'abc'))).toBeUndefined();
    expect(presentedToken(request('/v1/pbx/yeastar?token=abc', 'Bearer xyz', 'abc'))).toBe('xyz');
    expect(presentedToken(request('/v1/pbx/yeastar?token=a&token=b', undefined, ['a', 'b']))).toBeUndefined();
  });
});

describe('redactUrl', () => {
  it('keeps a token in the query string out of the logs', () => {
    expect(redactUrl('/v1/pbx/yeastar?token=s3cret&tz=Europe/Berlin')).toBe(
      '/v1/pbx/yeastar?token=[Redacted]&tz=Europe/Berlin',
    );
    expect(redactUrl('/v1/pbx/yeastar?tz=UTC&token=s3cret')).toBe('/v1/pbx/yeastar?tz=UTC&token=[Redacted]');
    expect(redactUrl('/v1/portal/events?auth[application_token]=s3cret&x=1')).toBe(
      '/v1/portal/events?auth[application_token]=[Redacted]&x=[Redacted]',
    );
    expect(redactUrl('/v1/portal/events?auth%5Baccess_token%5D=s3cret')).toBe(
      '/v1/portal/events?auth%5Baccess_token%5D=[Redacted]',
    );
  });

  it('shows the values of allowed parameters only, whatever name holds a secret', () => {
    expect(redactUrl('/v1/lookup?phone=%2B4930123456&key=s3cret')).toBe(
      '/v1/lookup?phone=%2B4930123456&key=[Redacted]',
    );
    expect(redactUrl('/v1/admin/calls?limit=5&after=c1&portal=p1&s3cret&sig=s3cret')).toBe(
      '/v1/admin/calls?limit=5&after=c1&portal=p1&[Redacted]&sig=[Redacted]',
    );
    // Decoded and any case for the allow-list; OAuth's `state` and `code` are credentials.
    expect(redactUrl('/x?%70hone=1&NUMBER=2&k%65y=s3cret&state=s3cret&code=s3cret&%E0=s3cret')).toBe(
      '/x?%70hone=1&NUMBER=2&k%65y=[Redacted]&state=[Redacted]&code=[Redacted]&%E0=[Redacted]',
    );
    expect(redactUrl('/v1/calls/a')).toBe('/v1/calls/a');
    expect(redactUrl('/v1/calls/a?')).toBe('/v1/calls/a?');
  });
});

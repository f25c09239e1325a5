import { phoneParameter } from './lookup.controller';

describe('phoneParameter', () => {
  it.each([
    ['/v1/lookup?phone=%2B4915112345678', '+4915112345678'],
    ['/v1/lookup?phone=+4915112345678', '+4915112345678'],
    ['/v1/lookup?phone=+49+151+1234-5678', '+49 151 1234-5678'],
    ['/v1/lookup?phone=0151+12345678&x=1', '0151 12345678'],
    ['/v1/lookup?x=1&phone=0151%2012345678', '0151 12345678'],
    ['/v1/lookup?phone=', ''],
    ['/v1/lookup?phone', ''],
    ['/v1/lookup?phone=%E0%A4%A', '%E0%A4%A'],
  ])('reads %s as %j', (url, phone) => {
    expect(phoneParameter(url)).toBe(phone);
  });

  it('is undefined without a phone parameter', () => {
    expect(phoneParameter('/v1/lookup')).toBeUndefined();
    expect(phoneParameter('/v1/lookup?telephone=1')).toBeUndefined();
  });
});

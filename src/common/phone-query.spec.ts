import { BadRequestException } from '@nestjs/common';
import { phoneParameter, requiredPhone } from './phone-query';

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

describe('requiredPhone', () => {
  const problemOf = (url: string, country?: string, name?: string) => {
    try {
      requiredPhone(url, { defaultCountry: country }, name);
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequestException);
      return (error as BadRequestException).getResponse();
    }
    throw new Error(`${url} was taken as a phone number`);
  };

  it('reads any written form as E.164, national ones in the default country', () => {
    expect(requiredPhone('/v1/lookup?phone=0151+12345678', { defaultCountry: 'DE' })).toBe('+4915112345678');
    expect(requiredPhone('/v1/pbx/3cx/lookup?number=%2B4930987654', {}, 'number')).toBe('+4930987654');
  });

  it('is a 400 naming the parameter when it is missing or no number', () => {
    expect(problemOf('/v1/lookup', 'DE')).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'phone is required',
      errors: [{ field: 'phone', problems: ['phone is required'] }],
    });
    expect(problemOf('/x?number=call-me', 'DE', 'number')).toMatchObject({
      message: 'number is not a phone number',
      errors: [{ field: 'number', problems: ['number is not a phone number'] }],
    });
    expect(problemOf('/v1/lookup?phone=0151+12345678')).toMatchObject({
      message: 'phone is not a phone number (a national number needs DEFAULT_COUNTRY on the bridge)',
    });
  });
});

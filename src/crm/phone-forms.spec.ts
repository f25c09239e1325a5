import { portalPhoneForms } from './phone-forms';

describe('portalPhoneForms', () => {
  it('adds the national digits for a number of the default country', () => {
    expect(portalPhoneForms('+493098765432', 'DE')).toEqual(['+493098765432', '03098765432']);
    expect(portalPhoneForms('+4915112345678', 'DE')).toEqual(['+4915112345678', '015112345678']);
  });

  it('asks only for E.164 for a foreign number or without a default country', () => {
    expect(portalPhoneForms('+442079460958', 'DE')).toEqual(['+442079460958']);
    expect(portalPhoneForms('+493098765432')).toEqual(['+493098765432']);
  });
});

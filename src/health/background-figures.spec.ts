import { BackgroundFigures } from './background-figures';

describe('BackgroundFigures', () => {
  it('reads once for any number of readers, and again in the background once the figures are old', async () => {
    let now = 1_000_000;
    let reads = 0;
    let release: (() => void) | undefined;
    const figures = new BackgroundFigures(
      async () => {
        reads += 1;
        if (reads > 1) await new Promise<void>((resolve) => (release = resolve));
        return reads;
      },
      5000,
      () => now,
    );
    // The first reader waits for the first read; the next ones get it at once.
    expect((await figures.latest()).value).toBe(1);
    for (let i = 0; i < 50; i++) expect((await figures.latest()).value).toBe(1);
    expect(reads).toBe(1);

    now += 5000;
    // Old: this reader still gets the last figures at once, and one read starts for the readers after it.
    expect((await figures.latest()).value).toBe(1);
    expect((await figures.latest()).value).toBe(1);
    expect(reads).toBe(2);
    release!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await figures.latest()).toEqual({ value: 2, readAt: now });
  });

  it('keeps the last figures when a background read fails', async () => {
    let now = 0;
    let fail = false;
    const figures = new BackgroundFigures(
      async () => {
        if (fail) throw new Error('store down');
        return 'ok';
      },
      1000,
      () => now,
    );
    expect((await figures.latest()).value).toBe('ok');
    fail = true;
    now += 2000;
    expect((await figures.latest()).value).toBe('ok');
    await new Promise((resolve) => setImmediate(resolve));
    expect((await figures.latest()).value).toBe('ok');
  });
});

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Frame, Page } from 'playwright-core';
import { shot, submitIn } from './portal-frame';

/** What a person does on the way through the guided setup: buttons pressed, fields filled. */
export interface SetupCount {
  clicks: number;
  fields: number;
}

/**
 * The guided setup driven as its user drives it, counting as it goes: every button pressed (from the
 * keyboard, as portal-frame.ts's `submitIn`) and every field filled; each step's screenshot at 1280 and at
 * 400 px (the portal's side panel).
 */
export class SetupSteps {
  private clicks = 0;
  private fields = 0;
  private readonly marks: Record<string, SetupCount> = {};

  constructor(
    private readonly page: Page,
    private readonly frame: Frame,
    private readonly label: string,
  ) {}

  async press(selector: string): Promise<void> {
    this.clicks++;
    await submitIn(this.frame, selector);
  }

  /** Ticks a checkbox or chooses a radio button from the keyboard (Space), as a keyboard user does. */
  async choose(selector: string): Promise<void> {
    this.clicks++;
    await this.frame.press(selector, 'Space');
  }

  async fill(selector: string, value: string): Promise<void> {
    this.fields++;
    await this.frame.fill(selector, value);
  }

  /** `name-label-1280.png` and `name-label-400.png`, the viewport put back after. */
  async screenshot(name: string): Promise<void> {
    const size = this.page.viewportSize() ?? { width: 1280, height: 900 };
    await this.page.setViewportSize({ width: 1280, height: 900 });
    await this.page.screenshot({ path: shot(`${name}-${this.label}-1280.png`), fullPage: true });
    await this.page.setViewportSize({ width: 400, height: 900 });
    await this.page.screenshot({ path: shot(`${name}-${this.label}-400.png`), fullPage: true });
    await this.page.setViewportSize(size);
  }

  /** Remembers the count so far as `name` (e.g. when the first call is delivered). */
  mark(name: string): void {
    this.marks[name] = { clicks: this.clicks, fields: this.fields };
  }

  /** The marks, and the whole way as `done`. */
  count(): Record<string, SetupCount> {
    return { ...this.marks, done: { clicks: this.clicks, fields: this.fields } };
  }
}

/**
 * The happy path's count into `setup-figures.json` beside the screenshots (docs/app-page/ when refreshed,
 * see portal-frame.ts), one key per system and mode:
 * `{"setupClicks": {"freepbx-multi": {"firstCall": {"clicks", "fields"}, "done": {…}}}}`.
 */
export function writeSetupFigure(system: string, mode: string, count: Record<string, SetupCount>): void {
  const path = shot('setup-figures.json');
  const figures = existsSync(path)
    ? (JSON.parse(readFileSync(path, 'utf8')) as {
        setupClicks?: Record<string, Record<string, SetupCount>>;
      })
    : {};
  figures.setupClicks = { ...figures.setupClicks, [`${system}-${mode}`]: count };
  writeFileSync(path, `${JSON.stringify(figures, null, 2)}\n`);
}

/** When the call was, for a recording whose path and name carry no date (its date folder, `{yyyy}/{mm}/{dd}`). */
export interface RecordingDate {
  /** The call's start (ms epoch). */
  at?: number;
  /** The zone the PBX names its date folders in (PBX_TIME_ZONE); UTC by default. */
  timeZone?: string;
}

/**
 * Recordings that a PBX names by file (Yeastar's `recording`, Asterisk's `recordingfile`/`MONITOR_FILENAME`,
 * FreeSWITCH's `record_path`): a full http(s) URL is taken as it is; a file name or path becomes a URL only
 * through the template configured for that PBX (`YEASTAR_RECORDING_URL`, `ASTERISK_RECORDING_URL`,
 * `FREESWITCH_RECORDING_URL`), since the bridge cannot guess where the PBX serves its files.
 *
 * The template is a base URL the file name is appended to (`https://pbx.local/rec/`), or carries `{file}` (the
 * file name alone) and/or `{path}` (the path as the PBX wrote it, without its leading `/`): each URL-encoded
 * per path segment. `{yyyy}`, `{mm}`, `{dd}` are the recording's date folder, as FreePBX files them
 * (`monitor/YYYY/MM/DD/`): from the path's folders when it has them, else from a FreePBX file name
 * (`<type>-<dest>-<from>-YYYYMMDD-HHMMSS-<uniqueid>`), else the call's date (`date`); none known, no URL.
 */
export function recordingUrlOf(
  recording: string | undefined,
  template: string | undefined,
  date: RecordingDate = {},
): string | undefined {
  const value = recording?.trim();
  if (!value) return undefined;
  if (/^https?:\/\//i.test(value)) return value;
  if (!template) return undefined;
  const path = value.replace(/\\/g, '/').replace(/^\/+/, '');
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.' && segment !== '..');
  if (segments.length === 0) return undefined;
  const file = encodeURIComponent(segments[segments.length - 1]);
  const encodedPath = segments.map(encodeURIComponent).join('/');
  if (!/\{(file|path|yyyy|mm|dd)\}/.test(template)) {
    return `${template}${template.endsWith('/') ? '' : '/'}${file}`;
  }
  let url = template.replace(/\{file\}/g, file).replace(/\{path\}/g, encodedPath);
  if (/\{(yyyy|mm|dd)\}/.test(url)) {
    const folder = dateFolderOf(segments, date);
    if (!folder) return undefined;
    url = url
      .replace(/\{yyyy\}/g, folder[0])
      .replace(/\{mm\}/g, folder[1])
      .replace(/\{dd\}/g, folder[2]);
  }
  return url;
}

/** `[yyyy, mm, dd]` of a recording: its path's date folders, its FreePBX name's date, or the call's date. */
function dateFolderOf(segments: string[], date: RecordingDate): [string, string, string] | undefined {
  const folders = segments.slice(-4, -1);
  if (
    folders.length === 3 &&
    /^\d{4}$/.test(folders[0]) &&
    /^\d{2}$/.test(folders[1]) &&
    /^\d{2}$/.test(folders[2])
  ) {
    return folders as [string, string, string];
  }
  const named = /-(\d{4})(\d{2})(\d{2})-\d{6}-/.exec(segments[segments.length - 1]);
  if (named) return [named[1], named[2], named[3]];
  if (date.at === undefined || !Number.isFinite(date.at)) return undefined;
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: date.timeZone ?? 'UTC',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(new Date(date.at));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return [part('year'), part('month'), part('day')];
}

/** A file name or path joined to the folder it is in, as FreeSWITCH's `record_path` + `record_name` name it. */
export function joinedPath(folder: string | undefined, name: string | undefined): string | undefined {
  if (!folder) return name;
  if (!name) return folder;
  if (/^https?:\/\//i.test(name) || name.startsWith('/')) return name;
  return `${folder.replace(/\/+$/, '')}/${name}`;
}

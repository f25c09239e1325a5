/**
 * Recordings that a PBX names by file (Yeastar's `recording`, Asterisk's `recordingfile`/`MONITOR_FILENAME`,
 * FreeSWITCH's `record_path`): a full http(s) URL is taken as it is; a file name or path becomes a URL only
 * through the template configured for that PBX (`YEASTAR_RECORDING_URL`, `ASTERISK_RECORDING_URL`,
 * `FREESWITCH_RECORDING_URL`), since the bridge cannot guess where the PBX serves its files.
 *
 * The template is a base URL the file name is appended to (`https://pbx.local/rec/`), or carries `{file}` (the
 * file name alone) and/or `{path}` (the path as the PBX wrote it, without its leading `/`): each URL-encoded
 * per path segment.
 */
export function recordingUrlOf(
  recording: string | undefined,
  template: string | undefined,
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
  if (template.includes('{file}') || template.includes('{path}')) {
    return template.replace(/\{file\}/g, file).replace(/\{path\}/g, encodedPath);
  }
  return `${template}${template.endsWith('/') ? '' : '/'}${file}`;
}

/** A file name or path joined to the folder it is in, as FreeSWITCH's `record_path` + `record_name` name it. */
export function joinedPath(folder: string | undefined, name: string | undefined): string | undefined {
  if (!folder) return name;
  if (!name) return folder;
  if (/^https?:\/\//i.test(name) || name.startsWith('/')) return name;
  return `${folder.replace(/\/+$/, '')}/${name}`;
}

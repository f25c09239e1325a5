import { AmiMessage } from './ami-message';

/** Where a call's recording is: FreePBX's `CDR(recordingfile)` (a bare file name), MIXMONITOR_FILENAME (a path). */
export interface Recording {
  recordingFile?: string;
  mixMonitorFile?: string;
}

/** What a VarSet or Newexten says of its channel's recording; undefined when it names none. */
export function recordingUpdate(event: AmiMessage): ((recording: Recording) => void) | undefined {
  if (event.Event === 'VarSet') {
    const value = event.Value;
    if (event.Variable !== 'MIXMONITOR_FILENAME' || !value) return undefined;
    return (recording) => (recording.mixMonitorFile = value);
  }
  // FreePBX writes CDR(recordingfile) with Set(): a function write, seen only as the Newexten's AppData.
  const file = /CDR\(recordingfile\)=([^,)\s]+)/.exec(event.AppData ?? '')?.[1];
  const path = (event.AppData ?? '').split(',')[0];
  if (
    !(event.Application === 'Set' && file) &&
    !(event.Application === 'MixMonitor' && path.startsWith('/'))
  ) {
    return undefined;
  }
  return file
    ? (recording) => (recording.recordingFile = file)
    : (recording) => (recording.mixMonitorFile ??= path);
}

/** The full path when known (FreePBX's date folders are in it), else FreePBX's bare name. */
export function recordingFileOf(recording: Recording): string | undefined {
  return recording.mixMonitorFile ?? recording.recordingFile;
}

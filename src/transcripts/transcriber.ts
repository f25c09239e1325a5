import { Direction, TranscriptMessage } from '../calls/call';
import { channelSides, FirstChannel, messagesFromSegments } from '../calls/call-transcript';
import { EgressPolicy } from '../common/egress';
import { TranscribeSettings } from '../config/settings';
import { recordingChannels } from './audio-channels';
import { TranscribeClient, TranscribeOutcome } from './transcribe-client';

/** What one recording came to at the service. */
export type RecordingTranscript =
  | { kind: 'messages'; messages: TranscriptMessage[]; serviceMs: number }
  | (Exclude<TranscribeOutcome, { kind: 'segments' }> & { serviceMs: number });

/** A recording to transcribe: its bytes, its file name (the type from its extension), the call's direction. */
export interface HeldRecording {
  audio: Buffer;
  filename: string;
  direction?: Direction;
}

/** A file's request is abandoned when nothing moves for this long (a long file takes the service a while). */
const SERVICE_IDLE_MS = 300_000;

/**
 * The deployment's transcriber (SPEC §12), shared by every portal: at most TRANSCRIBE_CONCURRENCY recordings
 * at the service (and in memory) at once, whatever the backlog. A portal takes a slot (`tryTake`) before it
 * reads a held file, and gives it back when done; portals waiting for one are woken when one frees.
 */
export class Transcriber {
  readonly waitMs: number;
  private readonly firstChannel: FirstChannel;
  private readonly client: TranscribeClient;
  private taken = 0;
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly settings: TranscribeSettings,
    egress: EgressPolicy = EgressPolicy.unrestricted(),
  ) {
    if (!settings.url) throw new Error('Transcriber: TRANSCRIBE_URL is not set');
    this.waitMs = settings.waitMs;
    this.firstChannel = settings.firstChannel;
    this.client = new TranscribeClient({
      url: settings.url,
      authorization: settings.authorization,
      model: settings.model,
      language: settings.language,
      idleTimeoutMs: SERVICE_IDLE_MS,
      egress,
    });
  }

  /** The deployment's transcriber, or undefined when TRANSCRIBE_URL is unset. */
  static of(settings: TranscribeSettings): Transcriber | undefined {
    return settings.url ? new Transcriber(settings) : undefined;
  }

  get concurrency(): number {
    return this.settings.concurrency;
  }

  /** Takes a slot if one is free. */
  tryTake(): boolean {
    if (this.taken >= this.settings.concurrency) return false;
    this.taken += 1;
    return true;
  }

  /** Gives a slot back; the portals waiting for one look again. */
  giveBack(): void {
    this.taken = Math.max(0, this.taken - 1);
    for (const wake of this.waiting) wake();
  }

  /** Told whenever a slot frees; returns the way to stop hearing. */
  onFree(wake: () => void): () => void {
    this.waiting.add(wake);
    return () => this.waiting.delete(wake);
  }

  /**
   * The recording's messages: a two-channel file sent one channel at a time, each channel's segments of its
   * side; one channel sent whole, every message `Client`. The first channel that cannot be done decides.
   */
  async transcribe(held: HeldRecording, signal?: AbortSignal): Promise<RecordingTranscript> {
    const started = Date.now();
    const type = held.filename.toLowerCase().endsWith('.wav') ? 'audio/wav' : 'audio/mpeg';
    let split: Awaited<ReturnType<typeof recordingChannels>>;
    try {
      split = await recordingChannels(held.audio, type, held.filename);
    } catch (error) {
      const reason = `the recording could not be read: ${(error as Error).message}`;
      return { kind: 'refused', reason, serviceMs: 0 };
    }
    const sides = channelSides(split.channels, held.direction, this.firstChannel);
    const channels = [];
    for (const [index, file] of split.files.entries()) {
      const outcome = await this.client.transcribe(file, signal);
      if (outcome.kind !== 'segments') return { ...outcome, serviceMs: Date.now() - started };
      channels.push({ side: sides[index] ?? 'Client', segments: outcome.segments });
    }
    return { kind: 'messages', messages: messagesFromSegments(channels), serviceMs: Date.now() - started };
  }
}

import axios from 'axios';
import { ActiveTranscribeFault, TranscribeFaultSpec } from './transcribe-faults';
import {
  ReceivedRequest,
  TRANSCRIBE_CONTROL_PREFIX,
  TranscribeServer,
  TranscribeStats,
} from './transcribe-server';

/** The transcription test server's inspection and fault API, over real HTTP (like sandbox-inspect.ts). */

export async function transcribeRequests(server: TranscribeServer): Promise<ReceivedRequest[]> {
  return (await axios.get(`${server.url}${TRANSCRIBE_CONTROL_PREFIX}/requests`)).data;
}

export async function transcribeStats(server: TranscribeServer): Promise<TranscribeStats> {
  return (await axios.get(`${server.url}${TRANSCRIBE_CONTROL_PREFIX}/stats`)).data;
}

export async function injectTranscribeFault(
  server: TranscribeServer,
  fault: TranscribeFaultSpec,
): Promise<ActiveTranscribeFault> {
  return (await axios.post(`${server.url}${TRANSCRIBE_CONTROL_PREFIX}/faults`, fault)).data;
}

export async function clearTranscribeFaults(server: TranscribeServer): Promise<void> {
  await axios.delete(`${server.url}${TRANSCRIBE_CONTROL_PREFIX}/faults`);
}

export async function resetTranscribeServer(server: TranscribeServer): Promise<void> {
  await axios.post(`${server.url}${TRANSCRIBE_CONTROL_PREFIX}/reset`);
}

/** The admin request log: one entry per token or API request (docs/architecture.md section 6). */
import type { InjectedFault } from './faults.ts';

export interface RequestLogEntry {
  /** When the request arrived, ISO 8601 UTC. */
  readonly time: string;
  readonly kind: 'token' | 'api';
  readonly method: string;
  /** The URL path, without the query. */
  readonly path: string;
  /** From the client (token) or the verified token's tenant_id (api); null when unknown. */
  readonly tenant: string | null;
  /** The status the emulator answered with; null when the connection was dropped before any answer was decided. */
  readonly status: number | null;
  readonly fault: InjectedFault | null;
}

export class RequestLog {
  #entries: RequestLogEntry[] = [];

  add(entry: RequestLogEntry): void {
    this.#entries.push(entry);
  }

  entries(): readonly RequestLogEntry[] {
    return [...this.#entries];
  }

  clear(): void {
    this.#entries = [];
  }
}

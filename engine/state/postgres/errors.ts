/**
 * What went wrong opening or using the PostgreSQL state store, in one line that names neither the
 * URL nor a password: a driver's message may quote the connection string, so it is never passed on
 * as is, only its SQLSTATE or system error code.
 */
import { SchemaVersionError } from './schema.ts';

export class PostgresStateError extends Error {
  readonly code = 'state-postgres';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PostgresStateError';
  }
}

/** Where the store is, as messages name it: host, port and database (never user or password). */
export interface PostgresTarget {
  readonly host: string;
  readonly port: string;
  readonly database: string;
  readonly schema: string;
}

function where(target: PostgresTarget): string {
  return `the PostgreSQL state store (${target.host}:${target.port}, database ${JSON.stringify(target.database)})`;
}

/** The one-line reason for a failure of `doing` (e.g. "connect to"). */
export function describePostgresError(error: unknown, target: PostgresTarget, doing: string): PostgresStateError {
  if (error instanceof PostgresStateError) return error;
  if (error instanceof SchemaVersionError) return new PostgresStateError(error.message, { cause: error });
  const code = String((error as { code?: unknown } | undefined)?.code ?? '');
  const store = where(target);
  switch (code) {
    case 'ECONNREFUSED':
      return new PostgresStateError(`cannot ${doing} ${store}: connection refused (is the server running and listening there?)`, { cause: error });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new PostgresStateError(`cannot ${doing} ${store}: host ${JSON.stringify(target.host)} not found`, { cause: error });
    case 'ETIMEDOUT':
    case 'ECONNRESET':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new PostgresStateError(`cannot ${doing} ${store}: the server is unreachable (${code})`, { cause: error });
    case '28P01':
    case '28000':
      return new PostgresStateError(`cannot ${doing} ${store}: authentication failed (check the user and password in the state URL)`, { cause: error });
    case '3D000':
      return new PostgresStateError(`cannot ${doing} ${store}: the database does not exist`, { cause: error });
    case '42501':
      return new PostgresStateError(
        `cannot ${doing} ${store}: permission denied for schema ${JSON.stringify(target.schema)} (the user needs CREATE on the database to create it at first use, then USAGE and CREATE on the schema, or an administrator creates it)`,
        { cause: error },
      );
    // 57P01 ends a session that pg_terminate_backend (or a fast shutdown) terminated: the server may
    // well be running, so it is not called a shutdown. 57P02 and 57P03 are the server's own state.
    case '57P01':
      return new PostgresStateError(`cannot ${doing} ${store}: the server terminated this session (57P01: pg_terminate_backend, or a shutdown)`, {
        cause: error,
      });
    case '57P02':
      return new PostgresStateError(`cannot ${doing} ${store}: the server ended the session after another server process crashed (57P02)`, { cause: error });
    case '57P03':
      return new PostgresStateError(`cannot ${doing} ${store}: the server is shutting down or starting up (57P03)`, { cause: error });
    default:
      break;
  }
  if ((error as Error | undefined)?.message === 'Connection terminated unexpectedly') {
    return new PostgresStateError(`cannot ${doing} ${store}: the connection was closed unexpectedly`, { cause: error });
  }
  if (/timeout/i.test((error as Error | undefined)?.message ?? '')) {
    return new PostgresStateError(`cannot ${doing} ${store}: timed out`, { cause: error });
  }
  return new PostgresStateError(`cannot ${doing} ${store}: ${code === '' ? 'unexpected error' : `error ${code}`}`, { cause: error });
}

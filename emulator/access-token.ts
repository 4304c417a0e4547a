/** The API's check of a bearer token: RS256 signature, issuer, audience, expiry, tenant, scope. */
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWK, type JWTPayload } from 'jose';

export interface VerifiedToken {
  readonly tenant: string;
  /** The client the token was issued to (`client_id`): the actor of the audit events its changes record. */
  readonly clientId: string;
  readonly scopes: ReadonlySet<string>;
  readonly jti: string | undefined;
}

export interface TokenVerifierOptions {
  readonly publicKey: JWK;
  readonly issuer: string;
  readonly audience: string;
  readonly now: () => number;
  readonly isRevoked: (jti: string) => boolean;
}

/** Why a bearer token was refused; the API answers 401 with this description. */
export class TokenRejected extends Error {
  readonly code = 'invalid-token';
}

export type TokenVerifier = (authorization: string | undefined) => Promise<VerifiedToken>;

export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const keys = createLocalJWKSet({ keys: [options.publicKey] });

  function describe(error: unknown): string {
    if (error instanceof joseErrors.JWTExpired) return 'the access token has expired';
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'the access token signature is invalid';
    if (error instanceof joseErrors.JWTClaimValidationFailed) return `the access token claim "${error.claim}" is invalid (${error.reason})`;
    return 'the access token is malformed or not signed by this realm';
  }

  return async function verify(authorization) {
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization ?? '');
    if (!match) throw new TokenRejected(authorization === undefined ? 'no bearer token' : 'expected "Authorization: Bearer <token>"');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(match[1]!, keys, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: ['RS256'],
        typ: 'at+jwt',
        requiredClaims: ['exp', 'iat'],
        currentDate: new Date(options.now()),
      }));
    } catch (error) {
      throw new TokenRejected(describe(error), { cause: error });
    }
    if (typeof payload.jti === 'string' && options.isRevoked(payload.jti)) throw new TokenRejected('the access token has been revoked');
    const tenant = payload.tenant_id;
    if (typeof tenant !== 'string' || tenant === '') throw new TokenRejected('the access token carries no tenant_id');
    const clientId = payload.client_id;
    if (typeof clientId !== 'string' || clientId === '') throw new TokenRejected('the access token carries no client_id');
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
    return { tenant, clientId, scopes: new Set(scopes), jti: payload.jti };
  };
}

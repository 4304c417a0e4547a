// The part of oidc-provider v9 (which ships no types) that the emulator uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface KoaContextLike {
    readonly req: IncomingMessage;
    readonly oidc?: {
      readonly client?: { readonly clientId: string; readonly scope?: string };
      readonly params?: Readonly<Record<string, unknown>>;
    };
  }

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly issuer: string;
    readonly Client: { prototype: { compareClientSecret(this: { clientId: string }, actual: string): boolean | Promise<boolean> } };
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;
    use(middleware: (ctx: KoaContextLike, next: () => Promise<void>) => Promise<void>): this;
    on(event: string, listener: (...args: never[]) => void): this;
    proxy: boolean;
  }

  export const errors: {
    InvalidScope: new (description: string, scope: string) => Error;
    InvalidTarget: new (description?: string) => Error;
  };
}

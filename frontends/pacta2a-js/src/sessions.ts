import type { IncomingMessage } from "node:http";

/**
 * Sessions is the sign-in hook of a frontend that signs Users in for
 * trusted-frontend Brands (BRAND_LOGIN_MODE_TRUSTED_FRONTEND): pactd's
 * consent and connected-assistants pages of such a Brand ask who is signed
 * in here, and the frontend vouches for the answer with its credential.
 * Without it those Brands' pages answer 404; signed-assertion Brands need
 * none. @pactd/demo's DemoLogin is a cookie sign-in.
 */
export interface Sessions {
  /** brandUser is the id at brandId of the User signed in on req, or "" when nobody is. */
  brandUser(req: IncomingMessage, brandId: string): string | Promise<string>;
  /**
   * loginUrl is where a User who is not signed in goes first (pactd
   * redirects there from a page); the sign-in then returns to returnTo, a
   * path and query on this frontend.
   */
  loginUrl(brandId: string, returnTo: string): string;
}

import type { IncomingMessage, ServerResponse } from "node:http";
import { bare } from "./errors.js";
import type { Frontend } from "./handler.js";
import type { BrandView, View } from "./pages.js";
import { BrandLoginMode } from "./gen/pact/v1/brand_pb.js";
import { cardFacts } from "./signed.js";

/** brandName is the Brand's display name (its Agent Card's name), or "" when pactd does not know the Brand or cannot answer. */
export async function brandName(fe: Frontend, brandId: string): Promise<string> {
  try {
    return cardFacts((await fe.brands.getAgentCard({ brandId })).cardJson).name;
  } catch {
    return "";
  }
}

/** maxRootBrands bounds the Brands the root page lists. */
const maxRootBrands = 200;

/**
 * rootPage serves GET /: the Brands pactd has, by display name, each with
 * its Agent Card's link (and the connected page's, when it offers
 * delegation), as the Go frontend's.
 */
export async function rootPage(fe: Frontend, res: ServerResponse): Promise<void> {
  const v: View = { title: "PACT Provider", brands: [] };
  let pageToken = "";
  try {
    while (v.brands!.length < maxRootBrands) {
      const r = await fe.brands.listBrands({ page: { pageSize: 100, pageToken } });
      for (const b of r.brands) {
        const base = "/a2a/" + encodeURIComponent(b.brandId);
        const bv: BrandView = {
          id: b.brandId, name: b.displayName, description: b.description, card: base + "/.well-known/agent-card.json",
          // Only a trusted-frontend Brand's Users can list their grants here.
          connected: b.delegation?.enabled && b.delegation.loginMode === BrandLoginMode.TRUSTED_FRONTEND ? base + "/oauth/connected" : "",
        };
        v.brands!.push(bv);
      }
      if (r.nextPageToken === "") break;
      pageToken = r.nextPageToken;
    }
  } catch (err) {
    fe.log("list brands", { error: err instanceof Error ? err.message : String(err) });
    return fe.pages.render(res, 500, "root", { title: "PACT Provider", error: "The Brands cannot be listed right now. Try again later." });
  }
  fe.pages.render(res, 200, "root", v);
}

/**
 * notFound answers 404. A browser (a GET that accepts text/html) gets a page
 * saying what is missing and linking the root page; every other client gets
 * the bare 404 PACT 1.0 §1.2 and §1.3 require, byte for byte.
 */
export function notFound(fe: Frontend, req: IncomingMessage, res: ServerResponse, brandId = ""): void {
  if (req.method !== "GET" || !acceptsHTML(req)) return bare(res, 404);
  const v: View = { title: "Page not found", error: "There is no page at this address." };
  if (brandId !== "") {
    v.title = "Brand not found";
    // Echo only what a Brand id can be.
    v.error = /^[A-Za-z0-9_-]{1,64}$/.test(brandId) ? `This Provider serves no Brand named “${brandId}”.` : "This Provider serves no such Brand.";
  }
  fe.pages.render(res, 404, "notfound", v);
}

/** acceptsHTML reports whether the request's Accept header names text/html without q=0 (RFC 9110 §12.4.2), as browsers' navigations do. */
export function acceptsHTML(req: IncomingMessage): boolean {
  const accept = req.headersDistinct?.["accept"] ?? [];
  for (const v of accept) {
    for (const part of v.split(",")) {
      const [mt, ...params] = part.split(";");
      if (mt!.trim().toLowerCase() !== "text/html") continue;
      const refused = params.some((p) => {
        const [k, val] = p.split("=", 2);
        const q = Number((val ?? "").trim());
        return (k ?? "").trim().toLowerCase() === "q" && (val ?? "").trim() !== "" && !Number.isNaN(q) && q === 0;
      });
      if (!refused) return true;
    }
  }
  return false;
}

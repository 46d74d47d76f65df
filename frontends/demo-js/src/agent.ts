/**
 * The demo Brand's support agent, as in the Go frontend's package demo: its
 * account actions need scopes, so PACT Delegated's step-up, consent and
 * receipts can be seen. It is the example of what a Provider writes itself.
 */
import type { Agent, Reply, Turn } from "@pactd/a2a";

/** The demo Brand's scopes. */
export const scopeOrdersRead = "orders:read";
export const scopeOrdersCancel = "orders:cancel";
export const scopeProfileRead = "profile:read";

/**
 * orderCancelType is the demo Brand's authorization_details type (PACT §5.7,
 * RFC 9396): {"type": orderCancelType, "order_id": "1002", "actions":
 * ["cancel"]} permits cancelling that one order. It needs orders:cancel.
 */
export const orderCancelType = "https://acme.example/authorization/order-cancel/v1";

interface Order {
  id: string;
  item: string;
  status: string;
}

/** DemoAgent: every User starts with the same three orders; cancellations are kept in memory. */
export class DemoAgent implements Agent {
  private readonly orders = new Map<string, Order[]>(); // by Brand and Brand user

  /**
   * reply answers "show my orders" (orders:read), "cancel order N"
   * (orders:cancel) and anything else with help. A turn whose scope the
   * caller lacks asks for it (the frontend turns that into a step-up).
   */
  async reply(t: Turn): Promise<Reply> {
    const text = t.text.toLowerCase();
    if (text.includes("cancel")) return this.cancel(t, orderNumber(text));
    if (text.includes("order")) return this.list(t);
    let msg = "Hi! This is the " + t.brandId +
      ' support agent. I can show your orders (say "show my orders") or cancel one ("cancel order 1002").';
    if (t.delegation) msg += ` You are signed in as ${t.delegation.brandUser}; I may use: ${t.delegation.scopes.join(", ")}.`;
    return { text: msg };
  }

  private list(t: Turn): Reply {
    const lack = lacks(t, scopeOrdersRead);
    if (lack) return lack;
    const user = t.delegation!.brandUser;
    let s = `Your orders, ${user}:`;
    for (const o of this.of(t.brandId, user)) s += `\n- #${o.id} ${o.item}: ${o.status}`;
    return { text: s, scopesUsed: [scopeOrdersRead], actions: [{ tool: "list_orders" }] };
  }

  private cancel(t: Turn, id: string): Reply {
    if (id === "") return { text: 'Which order should I cancel? Say for example "cancel order 1002".' };
    const lack = lacks(t, scopeOrdersCancel);
    if (lack) return lack;
    if (!mayCancel(t, id)) {
      // Resource-bound grant without this order: never the action; the PA
      // has to ask for it (authorization_details for this order).
      return {
        needScopes: [scopeOrdersCancel],
        text: "You allowed me to cancel only certain orders, and order #" + id + " is not one of them. " +
          "Please connect again and allow cancelling order #" + id + ".",
      };
    }
    const used = [scopeOrdersCancel];
    const o = this.of(t.brandId, t.delegation!.brandUser).find((x) => x.id === id);
    if (!o) return { text: "I cannot find order #" + id + " in your account.", scopesUsed: used };
    if (o.status !== "processing") return { text: `Order #${id} is ${o.status}, so it can no longer be cancelled.`, scopesUsed: used };
    o.status = "cancelled";
    return {
      text: `Done: order #${id} (${o.item}) is cancelled.`, scopesUsed: used,
      actions: [{ tool: "cancel_order", args: { orderId: id } }],
    };
  }

  /** of returns a User's orders, creating them on first use. */
  private of(brandId: string, user: string): Order[] {
    const key = brandId + "\0" + user;
    let list = this.orders.get(key);
    if (!list) {
      list = [
        { id: "1001", item: "Espresso beans, 1 kg", status: "delivered" },
        { id: "1002", item: "Milk frother", status: "processing" },
        { id: "1003", item: "Ceramic cups, set of 4", status: "shipped" },
      ];
      this.orders.set(key, list);
    }
    return list;
  }
}

/**
 * mayCancel enforces the grant's authorization_details of orderCancelType
 * against the actual order: without any such entry the scope alone decides;
 * with some, an entry for exactly this order with the action "cancel" must
 * exist (a union of exact orders).
 */
function mayCancel(t: Turn, orderId: string): boolean {
  let bound = false;
  for (const e of t.delegation?.authorizationDetails ?? []) {
    if (e.type !== orderCancelType) continue;
    bound = true;
    const order = e.members.some((m) => m.name === "order_id" && !m.array && m.values.length === 1 && m.values[0] === orderId);
    const action = e.members.some((m) => m.name === "actions" && m.array && m.values.includes("cancel"));
    if (order && action) return true;
  }
  return !bound;
}

/** lacks is the step-up reply when the turn may not use scope. */
function lacks(t: Turn, scope: string): Reply | undefined {
  if (t.delegation?.scopes.includes(scope)) return undefined;
  return { needScopes: [scope], text: "I cannot open customer accounts here, so please ask me about something else." };
}

/** orderNumber is the first run of three or more digits in s, or "". */
export function orderNumber(s: string): string {
  for (const f of s.split(/[^0-9]+/)) if (f.length >= 3) return f;
  return "";
}

// Reference host for Cloudflare's Code Mode durable runtime (@cloudflare/codemode 0.5.6).
//
// One SQLite Durable Object class, `Host`, per room (`POST /?room=<name>`). Each Host
// holds the runtime handle (facet `codemode:default`, found via ctx.exports because this
// module re-exports CodemodeRuntime) and two toy connectors whose side effects live in
// the Host instance's memory:
//   kb.echo(args)                -> returns args (read, no approval)
//   crm.create_ticket({title})   -> requiresApproval, appends a ticket; revert removes it
//
// Request body: {op, ...}. Ops: ping, run {code}, approve {executionId},
// reject {executionId, seq}, rollback {executionId}, pending {executionId?},
// executions {limit?}, expirePaused {maxAgeMs?}, effects.
// Failures answer {error: message} with status 500.

import { DurableObject } from "cloudflare:workers";
import {
  CodemodeConnector,
  CodemodeRuntime,
  DynamicWorkerExecutor,
  createCodemodeRuntime,
  type CodemodeRuntimeHandle,
  type ConnectorTools,
} from "@cloudflare/codemode";

// The runtime spawns this class as a DO facet through ctx.exports.CodemodeRuntime.
export { CodemodeRuntime };

interface Env {
  HOST: DurableObjectNamespace<Host>;
  LOADER: WorkerLoader;
}

type Ticket = { id: number; title: string };

/** In-memory side effects of one Host instance (lost when the DO is evicted). */
class Effects {
  tickets: Ticket[] = [];
  reverted: Ticket[] = [];
  nextTicketId = 1;
  echoExecs = 0;
  ticketExecs = 0;
}

class KbConnector extends CodemodeConnector<Env> {
  constructor(
    ctx: DurableObjectState,
    env: Env,
    private fx: Effects,
  ) {
    super(ctx, env);
  }
  name() {
    return "kb";
  }
  protected instructions() {
    return "Toy knowledge base.";
  }
  protected tools(): ConnectorTools {
    return {
      echo: {
        description: "Return the arguments unchanged.",
        inputSchema: { type: "object" },
        execute: (args) => {
          this.fx.echoExecs++;
          return args;
        },
      },
    };
  }
}

class CrmConnector extends CodemodeConnector<Env> {
  constructor(
    ctx: DurableObjectState,
    env: Env,
    private fx: Effects,
  ) {
    super(ctx, env);
  }
  name() {
    return "crm";
  }
  protected instructions() {
    return "Toy CRM.";
  }
  protected tools(): ConnectorTools {
    return {
      create_ticket: {
        description: "Create a support ticket.",
        inputSchema: {
          type: "object",
          properties: { title: { type: "string" } },
          required: ["title"],
        },
        requiresApproval: true,
        execute: (args) => {
          this.fx.ticketExecs++;
          const { title } = args as { title: string };
          const ticket = { id: this.fx.nextTicketId++, title };
          this.fx.tickets.push(ticket);
          return ticket;
        },
        revert: (_args, result) => {
          const { id } = result as Ticket;
          const i = this.fx.tickets.findIndex((t) => t.id === id);
          if (i >= 0) this.fx.reverted.push(...this.fx.tickets.splice(i, 1));
        },
      },
    };
  }
}

type Req = {
  op?: string;
  code?: string;
  executionId?: string;
  seq?: number;
  limit?: number;
  maxAgeMs?: number;
};

export class Host extends DurableObject<Env> {
  private fx = new Effects();

  // A fresh handle per request, as an agent would build it; durable state lives in
  // the runtime facet, connector effects in `this.fx`.
  private runtime(): CodemodeRuntimeHandle {
    return createCodemodeRuntime({
      ctx: this.ctx,
      executor: new DynamicWorkerExecutor({ loader: this.env.LOADER }),
      connectors: [
        new CrmConnector(this.ctx, this.env, this.fx),
        new KbConnector(this.ctx, this.env, this.fx),
      ],
    });
  }

  async op(req: Req): Promise<unknown> {
    switch (req.op) {
      case "ping":
        return { ok: true };
      case "run":
        if (typeof req.code !== "string") throw new Error("run needs a string `code`");
        return this.runtime().execute({ code: req.code });
      case "approve":
        return this.runtime().approve({ executionId: need(req.executionId, "executionId") });
      case "reject":
        if (typeof req.seq !== "number") throw new Error("reject needs a number `seq`");
        return this.runtime().reject({
          executionId: need(req.executionId, "executionId"),
          seq: req.seq,
        });
      case "rollback":
        await this.runtime().rollback({ executionId: need(req.executionId, "executionId") });
        return { ok: true };
      case "pending":
        return this.runtime().pending(req.executionId);
      case "executions":
        return this.runtime().executions(req.limit);
      case "expirePaused":
        return this.runtime().expirePaused(
          req.maxAgeMs === undefined ? {} : { maxAgeMs: req.maxAgeMs },
        );
      case "effects":
        return {
          tickets: this.fx.tickets,
          reverted: this.fx.reverted,
          echoExecs: this.fx.echoExecs,
          ticketExecs: this.fx.ticketExecs,
        };
      default:
        throw new Error(`unknown op ${JSON.stringify(req.op)}`);
    }
  }
}

function need(v: unknown, name: string): string {
  if (typeof v !== "string" || v === "") throw new Error(`missing string \`${name}\``);
  return v;
}

function json(value: unknown, status = 200): Response {
  // `undefined` (e.g. a void op) still answers valid JSON.
  return new Response(JSON.stringify(value ?? null), {
    status,
    headers: { "content-type": "application/json" },
  });
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    try {
      if (request.method !== "POST") return json({ error: "POST a JSON body {op, ...}" }, 405);
      const room = new URL(request.url).searchParams.get("room") || "default";
      const body = (await request.json()) as Req;
      const stub = env.HOST.get(env.HOST.idFromName(room));
      return json(await stub.op(body));
    } catch (e) {
      return json({ error: e instanceof Error ? e.message : String(e) }, 500);
    }
  },
} satisfies ExportedHandler<Env>;

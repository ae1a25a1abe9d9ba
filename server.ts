import cluster, { type Worker } from 'node:cluster';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { createServerAdapter } from '@whatwg-node/server';
import { Response as WhatwgResponse } from '@whatwg-node/fetch';
import type { Config } from './lib/config.js';
import { loadConfig } from './lib/config-file.js';
import { createEnv, type EnvOptions, type JobsQueuedMessage, type OwnedEnv } from './lib/env.js';
import { ERROR_STATUS, errorBody } from './lib/http/errors.js';
import { answerCompleteBodiesWith } from './lib/http/json-answer.js';
import { startingGate } from './lib/http/startup.js';
import { watchSubmissionsFolder } from './lib/ingest/folder-watch.js';
import { countAccounts } from './lib/repo/accounts.js';
import { queueOwedWork, requeueInterruptedJobs } from './lib/repo/jobs.js';
import { resumeAlertDelivery } from './lib/providers/alerts.js';
import { runRetention } from './lib/review/retention.js';
import { queueDailyBackup } from './lib/jobs/backup.js';
import { dayIn } from './lib/time.js';
import { clearLeases } from './lib/repo/leases.js';
import { clearReservations } from './lib/repo/quota.js';
import { createRouter } from './functions/router.js';
import type { Env, Logger } from './lib/ports.js';

export interface RunningServer {
  url: string;
  env: OwnedEnv;
  server: Server;
  /** Stops taking requests, lets in-flight ones finish, then closes the database. */
  stop(): Promise<void>;
}

/** Starts the service on SVC_HOST:SVC_PORT (port 0 picks a free one, for tests), in this one process. */
export async function startServer(config: Config, options: EnvOptions = {}): Promise<RunningServer> {
  const env = await createEnv(config, options);
  // Before the first request can take one.
  await clearLeases(env.db);
  const startup = (env.startup = startingGate(PICKING_UP_WORK));
  const server = await listen(env);
  const stopWork = await startWork(env, !options.storage);
  startup.open();
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await stopWork();
      await closeServer(server);
      await env.close();
    })());
  return { url: serverUrl(server), env, server, stop };
}

/** Answers requests on SVC_HOST:SVC_PORT with the router. */
async function listen(env: Env): Promise<Server> {
  // @whatwg-node's own Response for complete answers: its adapter writes them in one call (decisions/0060).
  answerCompleteBodiesWith(WhatwgResponse as typeof Response);
  const router = createRouter();
  const adapter = createServerAdapter((request: Request, ctx: unknown) => router.fetch(request as never, env, ctx));
  const server = createServer(closingCutAnswers(adapter, env.log));
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => refuseUnparsable(error, socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(env.config.SVC_PORT, env.config.SVC_HOST, () => resolve());
  });
  return server;
}

/** Lets in-flight requests finish, then closes. */
function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

function serverUrl(server: Server): string {
  const address = server.address() as AddressInfo;
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}

/**
 * The work of the process that runs the jobs: the submissions folder's journal (when the folder is
 * the data folder's, not a bucket's), what a previous process left, the job loops, retention.
 * Answers what stops the journal and retention.
 */
async function startWork(env: OwnedEnv, watchFolder: boolean): Promise<() => Promise<void>> {
  const watch = watchFolder ? await watchSubmissionsFolder(env.db, env.paths, env.log) : null;
  // Work a previous process left half done is picked up again, and work it never queued is queued.
  const requeued = await requeueInterruptedJobs(env.db);
  const queued = await queueOwedWork(env.db, env.clock.now().toISOString());
  await clearReservations(env.db);
  if (requeued) env.log.info('requeued interrupted jobs', { count: requeued });
  if (queued) env.log.info('queued work left owed', { count: queued });
  await resumeAlertDelivery(env, dayIn(env.clock.now(), env.config.SVC_TIMEZONE));
  env.jobs.start();
  await queueDailyBackup(env);
  const retention = scheduleRetention(env);
  return async () => {
    clearInterval(retention);
    await watch?.close();
  };
}

/**
 * With SVC_HTTP_PROCESSES above 1: this process runs the jobs, and that many request processes
 * answer on the one port (node:cluster hands each connection to one of them), so that reviewers'
 * requests do not all queue on one event loop. A request process's queued work wakes the job
 * loops here; a request process that dies is replaced; one that loses this process exits (Node's
 * cluster does that), so a killed service leaves none behind.
 */
async function startPrimary(config: Config): Promise<{ url: string; env: OwnedEnv; stop(): Promise<void> }> {
  const env = await createEnv(config);
  await clearLeases(env.db);
  let stopping = false;
  let url = '';
  const listening = new Set<Worker>();
  let ready = false;
  // Request processes told the work is picked up, until each says it has heard (or exits).
  const hearing = new Map<Worker, () => void>();
  const fork = () =>
    new Promise<string>((resolve, reject) => {
      const worker = cluster.fork();
      worker.on('message', (message: WorkerMessage) => {
        if (message?.type === 'listening') {
          listening.add(worker);
          // One started after the work was picked up (a replacement) is ready at once.
          if (ready) worker.send({ type: 'ready' } satisfies WorkerMessage);
          resolve(message.url);
        }
        if (message?.type === 'jobs-queued') void env.jobs.notify(message.count);
        if (message?.type === 'ready') hearing.get(worker)?.();
      });
      worker.once('exit', (code, signal) => {
        listening.delete(worker);
        hearing.get(worker)?.();
        reject(new Error(`a request process exited before it listened (${signal ?? code})`));
        if (stopping || !url) return;
        env.log.error('a request process exited; starting another', { code, signal });
        setTimeout(() => {
          if (!stopping) fork().catch((error) => env.log.error('a request process did not start', { error: error.message }));
        }, RESTART_DELAY_MS).unref();
      });
    });
  try {
    url = (await Promise.all(Array.from({ length: config.SVC_HTTP_PROCESSES }, fork)))[0];
  } catch (error) {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGKILL');
    await env.close();
    throw error;
  }
  const stopWork = await startWork(env, true);
  ready = true;
  // `listening` is logged once every request process serves reload: a script that waits for it
  // must not meet a 503.
  await Promise.all(
    [...listening].map(
      (worker) =>
        new Promise<void>((heard) => {
          hearing.set(worker, heard);
          worker.send({ type: 'ready' } satisfies WorkerMessage);
        }),
    ),
  );
  const stop = async () => {
    stopping = true;
    await stopWork();
    await Promise.all(
      Object.values(cluster.workers ?? {}).map((worker) => {
        if (!worker || worker.isDead()) return;
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        // One still starting has no request to finish, and may not yet hear a message.
        if (listening.has(worker)) worker.send({ type: 'stop' } satisfies WorkerMessage);
        else worker.kill('SIGKILL');
        return exited;
      }),
    );
    await env.close();
  };
  return { url, env, stop };
}

const RESTART_DELAY_MS = 1000;

type WorkerMessage = { type: 'listening'; url: string } | JobsQueuedMessage | { type: 'ready' } | { type: 'stop' } | undefined;

/** Why reload and rerun answer 503 between listening and the end of startWork. */
const PICKING_UP_WORK = 'picking up the work a previous process left';

/** A request process: answers on the shared port; the jobs its requests queue run in the primary. */
async function startRequestProcess(config: Config): Promise<void> {
  const env = await createEnv(config, { jobs: 'primary' });
  // The primary picks up the work a previous process left once this process listens; it says when.
  const startup = (env.startup = startingGate(PICKING_UP_WORK));
  const server = await listen(env);
  // The primary decides when to stop (a terminal's Ctrl-C reaches every process of the group).
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});
  process.on('message', (message: WorkerMessage) => {
    if (message?.type === 'ready') {
      startup.open();
      process.send!({ type: 'ready' } satisfies WorkerMessage);
    }
    if (message?.type !== 'stop') return;
    closeServer(server)
      .then(() => env.close())
      .finally(() => process.exit(0));
  });
  process.send!({ type: 'listening', url: serverUrl(server) } satisfies WorkerMessage);
}

/**
 * The adapter as node's request listener, closing the connection of an answer whose body failed
 * part-way (an export whose database read failed): the adapter only logs that, and the client,
 * whose status line said 200, would wait for the rest for ever. Closing is the only way left to
 * tell it the answer is incomplete. The adapter has written every answer in full when its promise
 * settles (a WHATWG stream it pumps to the end, a JSON answer's bytes once the socket took them
 * all, or no body).
 */
export function closingCutAnswers(
  adapter: (req: IncomingMessage, res: ServerResponse) => unknown,
  log: Logger,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void Promise.resolve(adapter(req, res)).finally(() => {
      if (res.writableEnded || res.destroyed) return;
      log.warn('an answer failed part-way; its connection is closed', { method: req.method, path: req.url?.split('?')[0] });
      // The adapter cancels the answer's body when the request errs, as closing makes it; that
      // body has failed already, so the cancel's promise would reject unhandled and end the process.
      req.removeAllListeners('error');
      req.on('error', () => {});
      res.destroy();
    });
  };
}

/**
 * Requests Node's parser refuses (an unknown method, a broken header or chunk, a header too large)
 * never reach the router; they still get CONTRACT.md's error shape, never Node's bare 400.
 */
function refuseUnparsable(error: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node's own handler does: once a response has started, the only honest answer is to close.
  if (!socket.writable || (socket as Duplex & { _httpMessage?: { headersSent: boolean } })._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const code = error.code === 'HPE_HEADER_OVERFLOW' ? 'payload_too_large' : 'invalid_request';
  const body = JSON.stringify(errorBody(code, code === 'payload_too_large' ? 'the request headers are too large' : 'the request could not be parsed as HTTP'));
  socket.end(
    `HTTP/1.1 ${ERROR_STATUS[code]} ${STATUS_CODES[ERROR_STATUS[code]]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The retention job runs once a day while the service is up (and on demand at POST /api/retention/run),
 * and with SVC_BACKUP_DAILY the daily backup is queued (also at start, when the last is a day old).
 */
function scheduleRetention(env: OwnedEnv): NodeJS.Timeout {
  const timer = setInterval(() => {
    queueDailyBackup(env).catch((error) => env.log.error('daily backup not queued', { error: error instanceof Error ? error.message : String(error) }));
    runRetention(env).then(
      (report) => env.log.info('retention run', { ...report }),
      (error) => env.log.error('retention failed', { error: error instanceof Error ? error.message : String(error) }),
    );
  }, DAY_MS);
  timer.unref();
  return timer;
}

async function main() {
  const { config, warnings } = loadConfig();
  if (cluster.isWorker) return startRequestProcess(config);
  const running = config.SVC_HTTP_PROCESSES > 1 ? await startPrimary(config) : await startServer(config);
  for (const warning of warnings) running.env.log.warn('configuration corrected', { warning });
  running.env.log.info('listening', { url: running.url, data: running.env.paths.dataDir, request_processes: config.SVC_HTTP_PROCESSES });
  if ((await countAccounts(running.env.db)) === 0) {
    running.env.log.info('no account yet: open the console on this machine to create the first administrator', { url: `${running.url}/` });
  }
  const shutdown = (signal: string) => {
    running.env.log.info('shutting down', { signal });
    running.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err) => {
    process.stderr.write(`start-up failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}

import { spawn } from 'node:child_process';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import { jsonText } from '../../lib/http/json.js';
import { createLogger } from '../../lib/log.js';
import { closingCutAnswers } from '../../server.js';
import { TEST_ADMIN_TOKEN } from '../helpers/admin-token.js';
import { copyFixture } from '../helpers/fixtures.js';
import { scriptArgs } from '../helpers/npm-script.js';
import { until } from '../helpers/until.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ROOT = join(import.meta.dirname, '..', '..');
const ADMIN = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
/** The data folder of a test that runs the service as its own process. */
let dataDir: string | undefined;
let running: TestServer | undefined;

afterEach(async () => {
  await running?.dispose();
  running = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

describe('the Node server', () => {
  it('lets an in-flight request finish on stop, then closes the database', async () => {
    running = await startTestServer();
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await fetch(`${running.url}/health`)).json()).toMatchObject({ status: 'ok' });
    for (const name of ['astronaut.png', 'camera.png', 'coffee.png']) copyFixture(name, running.server.env.paths.imagesDir);
    const reload = running.fetch('/api/submissions/reload', { method: 'POST' });
    await new Promise((r) => setTimeout(r, 50));
    const stopped = running.server.stop();
    const res = await reload;
    expect(res.status).toBe(200);
    expect((await res.json()).imported).toHaveLength(3);
    await stopped;
    expect(running.server.env.db.open).toBe(false);
    await expect(fetch(`${running.url}/health`)).rejects.toThrow();
  });

  it('sends JSON answers and errors in one piece with their length, not chunked', async () => {
    running = await startTestServer({ seed: { images: { 'a.png': 'astronaut.png' } } });
    await running.api('POST', '/api/submissions/reload');
    const ask = (path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
        get(`${running!.url}${path}`, { headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
        }).on('error', reject);
      });
    const page = await ask('/api/review-queue', ADMIN);
    const refused = await ask('/api/review-queue', {});
    const missing = await ask('/media/images/none.png', ADMIN);
    for (const { headers, body } of [page, refused, missing]) {
      expect(headers['transfer-encoding']).toBeUndefined();
      expect(Number(headers['content-length'])).toBe(body.length);
    }
    expect(JSON.parse(page.body.toString('utf8')).items.map((item: { id: string }) => item.id)).toEqual(['a']);
    expect([refused.status, JSON.parse(refused.body.toString('utf8')).error.code]).toEqual([401, 'unauthenticated']);
    expect([missing.status, JSON.parse(missing.body.toString('utf8')).error.code]).toEqual([404, 'not_found']);
    expect(missing.headers['content-security-policy']).toContain('sandbox');
  });

  it('picks up a job that was running when the process died, and runs it once', async () => {
    const service = await startTestServer();
    running = service;
    copyFixture('camera.png', service.server.env.paths.imagesDir);
    await service.api('POST', '/api/submissions/reload');
    const enrichJobs = async () =>
      ((await service.api('GET', '/api/jobs')).jobs as { type: string; status: string; attempts: number }[]).filter((j) => j.type === 'enrich');
    for (let i = 0; i < 100 && (await enrichJobs()).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await service.server.env.jobs.stop();
    // As if the process died mid-job: the row says running, nothing finished it.
    await service.server.env.db
      .prepare("UPDATE jobs SET status = 'running', finished_at = NULL, run_token = 'dead' WHERE submission_id = 'camera' AND type = 'enrich'")
      .run();
    await service.restart();
    let jobs = await enrichJobs();
    for (let i = 0; i < 100 && jobs.some((j) => j.status === 'running' || j.status === 'queued'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      jobs = await enrichJobs();
    }
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ status: 'skipped' });
    expect(jobs[0].attempts).toBeGreaterThanOrEqual(2);
  });

  it('starts as npm start runs it (its node flags too) on the configured port and exits cleanly on SIGTERM', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-process-'));
    const port = String(20000 + Math.floor(Math.random() * 20000));
    const child = spawn(process.execPath, scriptArgs(ROOT, 'start'), {
      cwd: ROOT,
      env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_PORT: port, SVC_ENRICH_CONCURRENCY: 'lots' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    for (let i = 0; i < 200 && !output.includes('"listening"'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(output).toContain(`http://127.0.0.1:${port}`);
    expect(output).toContain('SVC_ENRICH_CONCURRENCY: not a number, using the default');
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('shutting down');
  });

  it('with several request processes: all answer on the one port, the work their requests queue runs, a dead one is replaced, none outlives the service', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
    mkdirSync(join(dataDir, 'submissions', 'images'), { recursive: true });
    for (const name of ['astronaut.png', 'camera.png']) copyFixture(name, join(dataDir, 'submissions', 'images'));
    const port = String(20000 + Math.floor(Math.random() * 20000));
    const url = `http://127.0.0.1:${port}`;
    const started: number[] = [];
    const start = () => {
      // As npm start runs it: the request processes inherit its node flags.
      const child = spawn(process.execPath, scriptArgs(ROOT, 'start'), {
        cwd: ROOT,
        env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_PORT: port, SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN, SVC_HTTP_PROCESSES: '2' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.push(child.pid!);
      const service = { child, output: '', exited: new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))) };
      child.stdout.on('data', (d) => (service.output += d));
      child.stderr.on('data', (d) => (service.output += d));
      return service;
    };
    const when = (condition: () => boolean | Promise<boolean>, what: string) => until(what, condition, (held) => held);
    try {
      const service = start();
      await when(() => service.output.includes('"listening"'), 'listening');
      expect(service.output).toContain('"request_processes":2');
      expect(requestProcesses(service.child.pid!)).toHaveLength(2);
      // The reload is answered by a request process; the analyses it queued run in the primary.
      const reload = await fetch(`${url}/api/submissions/reload`, { method: 'POST', headers: ADMIN });
      expect((await reload.json()).imported).toHaveLength(2);
      const analysed = async () => {
        const progress = (await (await fetch(`${url}/api/jobs/progress`, { headers: ADMIN })).json()) as {
          types: { type: string; done: number; queued: number; running: number }[];
        };
        const analyse = progress.types.find((t) => t.type === 'analyse')!;
        return analyse.done === 2 && analyse.queued === 0 && analyse.running === 0;
      };
      await when(analysed, 'both analysed');
      // A request process killed: once the primary has seen it go (a connection handed to it in the
      // moment before is lost, as node:cluster does), the other answers, and another takes its place.
      const [victim] = requestProcesses(service.child.pid!);
      process.kill(victim, 'SIGKILL');
      await when(() => service.output.includes('a request process exited; starting another'), 'the death noticed');
      // (Each on a new connection: the killed process's connections are gone with it.)
      for (let i = 0; i < 10; i++) expect(await statusOnNewConnection(`${url}/health`)).toBe(200);
      await when(() => requestProcesses(service.child.pid!).length === 2 && !requestProcesses(service.child.pid!).includes(victim), 'a replacement');
      const queue = (await (await fetch(`${url}/api/review-queue`, { headers: ADMIN })).json()) as { total: number };
      expect(queue.total).toBe(2);
      // SIGTERM: every process ends, cleanly.
      const workers = requestProcesses(service.child.pid!);
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      expect(workers.filter(alive)).toEqual([]);
      // kill -9 of the primary: its request processes end too (test/ingest/crash.test.ts starts again on the port).
      const again = start();
      await when(() => again.output.includes('"listening"'), 'listening again');
      const orphans = requestProcesses(again.child.pid!);
      expect(orphans).toHaveLength(2);
      again.child.kill('SIGKILL');
      await again.exited;
      await when(() => orphans.filter(alive).length === 0, 'request processes gone with the primary');
    } finally {
      // A failed step leaves no service behind.
      for (const pid of started)
        for (const process_ of [...requestProcesses(pid), pid])
          try {
            process.kill(process_, 'SIGKILL');
          } catch {
            /* gone */
          }
    }
    // Each start compiles the service in three processes: about 10 s on a loaded 2-core machine.
  }, 120_000);

  it('closes the connection of an answer whose body fails part-way, and logs it; a whole streamed answer is untouched', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-server-'));
    const { config } = buildConfig({ SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN });
    const lines: string[] = [];
    const log = createLogger(config, { sink: (_level, line) => lines.push(line) });
    const chunks = (failAfter: number | null) => {
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          // As a database page read that fails after the first rows went out.
          await new Promise((resolve) => setTimeout(resolve, 10));
          if (sent === failAfter) throw new Error('the database went away');
          if (sent === 3) return controller.close();
          sent++;
          controller.enqueue(new TextEncoder().encode(`row ${sent}\n`));
        },
      });
    };
    const adapter = createServerAdapter((request: Request) => new Response(chunks(new URL(request.url).pathname === '/cut' ? 2 : null)));
    const server = createServer(closingCutAnswers(adapter, log)).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const cut = await fetch(`${url}/cut`);
      expect(cut.status).toBe(200);
      // Before, the client waited for the rest for ever.
      await expect(cut.text()).rejects.toThrow();
      expect(lines.some((line) => line.includes('failed part-way') && line.includes('"/cut"'))).toBe(true);
      expect(await (await fetch(`${url}/whole`)).text()).toBe('row 1\nrow 2\nrow 3\n');
      expect(lines.filter((line) => line.includes('failed part-way'))).toHaveLength(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('sends a JSON answer larger than the socket holds whole to a client that reads it late', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-server-'));
    const { config } = buildConfig({ SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN });
    const lines: string[] = [];
    const log = createLogger(config, { sink: (_level, line) => lines.push(line) });
    const text = JSON.stringify({ rows: 'x'.repeat(16 * 1024 * 1024) });
    const adapter = createServerAdapter(() => jsonText(text));
    const server = createServer(closingCutAnswers(adapter, log)).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const received = await new Promise<number>((resolve, reject) => {
        get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, (response) => {
          // The service meets a full socket and waits for it to drain; the answer is not over yet.
          response.pause();
          setTimeout(() => {
            let bytes = 0;
            response.on('data', (chunk: Buffer) => (bytes += chunk.length));
            response.on('end', () => resolve(bytes));
            response.resume();
          }, 500);
        }).on('error', reject);
      });
      expect(received).toBe(Buffer.byteLength(text));
      expect(lines.filter((line) => line.includes('failed part-way'))).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** The processes the service forked to answer requests (its children running server.ts, from /proc). */
function requestProcesses(primary: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return (
          Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === primary &&
          readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('server.ts')
        );
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/** Running, not gone and not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

function statusOnNewConnection(url: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, timeout: 5000 }, (response) => {
      response.resume();
      resolve(response.statusCode);
    })
      .on('timeout', () => reject(new Error(`${url}: no answer within 5 s`)))
      .on('error', reject);
  });
}

// tests/bench/graphile-worker.js: graphile-compare.sh's node side (run with
// NODE_PATH naming the install of graphile-worker and pg).
//
//   node graphile-worker.js migrate CONN
//       installs graphile-worker's schema into CONN's database
//   node graphile-worker.js worker CONN SETTINGS_JSON
//       one worker process with a no-op task "noop"; SETTINGS_JSON is merged
//       into preset.worker; prints "ready" once it runs; SIGTERM stops it
//   node graphile-worker.js produce CONN COUNT GO SQL
//       connects, creates the file GO.connected.PID, waits for the file GO,
//       then runs SQL COUNT times in autocommit (one job per commit); prints
//       {"jobs","seconds","p99_ms"}
//   node graphile-worker.js drain CONN REMAINING_SQL DEADLINE_S ADD_SQL
//       runs ADD_SQL (the jobs, one statement, autocommit), then reads
//       /proc/stat, counts REMAINING_SQL's rows and polls every 10 ms until
//       none is left; prints {"remaining_at_start","seconds","ticks"}
//       (whole-machine user+nice+system+irq+softirq ticks over the drain);
//       exit 1 after DEADLINE_S
// One persistent connection per process, so that polling costs the machine
// as little as it can.
"use strict";
const fs = require("fs");
const { Client } = require("pg");

const [cmd, conn, ...args] = process.argv.slice(2);

function busyTicks() {
	const f = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/);
	// cpu user nice system idle iowait irq softirq ...
	return [1, 2, 3, 6, 7].reduce((s, i) => s + Number(f[i]), 0);
}

async function migrate() {
	const { runMigrations } = require("graphile-worker");
	await runMigrations({ connectionString: conn });
}

async function worker() {
	const { run, Logger } = require("graphile-worker");
	const settings = JSON.parse(args[0]);
	// errors only: a line per job would cost more than the job
	const logger = new Logger(() => (level, message) => {
		if (level === "error") console.error(message);
	});
	const runner = await run({
		logger,
		noHandleSignals: false,
		taskList: { noop: async () => {} },
		preset: { worker: { connectionString: conn, ...settings } },
	});
	console.log("ready");
	await runner.promise;
}

async function produce() {
	const [count, go, sql] = [Number(args[0]), args[1], args[2]];
	const c = new Client({ connectionString: conn });
	await c.connect();
	fs.writeFileSync(`${go}.connected.${process.pid}`, "");
	while (!fs.existsSync(go)) await new Promise((r) => setTimeout(r, 1));
	const lat = [];
	const t0 = process.hrtime.bigint();
	for (let i = 0; i < count; i++) {
		const s = process.hrtime.bigint();
		await c.query(sql);
		lat.push(Number(process.hrtime.bigint() - s) / 1e6);
	}
	const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
	lat.sort((a, b) => a - b);
	const p99 = lat[Math.min(lat.length - 1, Math.ceil(lat.length * 0.99) - 1)];
	console.log(JSON.stringify({ jobs: count, seconds, p99_ms: p99 }));
	await c.end();
}

async function drain() {
	const [sql, deadline, add] = [args[0], Number(args[1]), args[2]];
	const c = new Client({ connectionString: conn });
	await c.connect();
	await c.query(add);
	const count = `SELECT count(*)::int AS n FROM (${sql}) r`;
	const exists = `SELECT EXISTS (${sql}) AS e`;
	const ticks0 = busyTicks();
	const t0 = process.hrtime.bigint();
	const remaining = (await c.query(count)).rows[0].n;
	for (;;) {
		if (!(await c.query(exists)).rows[0].e) break;
		if (Number(process.hrtime.bigint() - t0) / 1e9 > deadline) {
			console.error(`drain: jobs still left after ${deadline} s`);
			process.exit(1);
		}
		await new Promise((r) => setTimeout(r, 10));
	}
	const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
	const ticks = busyTicks() - ticks0;
	console.log(JSON.stringify({ remaining_at_start: remaining, seconds, ticks }));
	await c.end();
}

const cmds = { migrate, worker, produce, drain };
if (!cmds[cmd]) {
	console.error("usage: graphile-worker.js migrate|worker|produce|drain CONN ...");
	process.exit(64);
}
cmds[cmd]().catch((e) => {
	console.error(`graphile-worker.js ${cmd}: ${e.message}`);
	process.exit(1);
});

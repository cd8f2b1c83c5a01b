/**
 * Layer rules of src/ (DESIGN.md, "Module map"). `npm run lint:layers`
 * fails the build when an import crosses a line drawn here.
 *
 *   protocol/  the wire contract           imports only errors.ts
 *   table/     rows <-> Arrow              imports protocol/, ipc/, json/, no plane
 *   json/      JSON for Arrow              imports protocol/, table/, errors.ts, no plane
 *   ipc/       Arrow IPC framing           imports protocol/, table/, no plane
 *   sql/       query_rows' engine (DuckDB) imports protocol/, table/, errors.ts, no plane
 *   cache/     the body stores             the place control/ and data/ meet
 *   control/   MCP tools (control plane)   never data/
 *   data/      HTTP fetches (data plane)   never control/
 *   worker/    encoder threads             only table/, ipc/, protocol/
 *   consumer/  fetch + merge               never cache/ or data/
 *   agent/     the agent's SDK side        never cache/ or data/
 *   server/, cli/  composition roots       may import every plane
 *   agent/adapters/  framework adapters     the only importers of agent frameworks
 *   telemetry/ spans (optional OTel API)   imports no plane; every plane may import it
 */
const PLANES = '^src/(cache|control|data|worker|consumer|agent|server|cli)/';

module.exports = {
  forbidden: [
    {
      name: 'control-not-data',
      comment: 'The control plane reaches bodies through cache/, never through the data plane (they meet in cache/, table/, ipc/, protocol/).',
      severity: 'error',
      from: { path: '^src/control/' },
      to: { path: '^src/data/' },
    },
    {
      name: 'data-not-control',
      comment: 'The data plane knows nothing of MCP tools.',
      severity: 'error',
      from: { path: '^src/data/' },
      to: { path: '^src/control/' },
    },
    {
      name: 'worker-only-libraries',
      comment: 'Workers run in other threads: they get bytes and plans, never stores, routes or tools.',
      severity: 'error',
      from: { path: '^src/worker/' },
      to: { path: '^src/(cache|data|control|consumer|agent|server|cli)/' },
    },
    {
      name: 'consumer-and-agent-not-server-side',
      comment: 'The consumer and the agent side talk to a resource server over the wire, never to its store or routes.',
      severity: 'error',
      from: { path: '^src/(consumer|agent)/' },
      to: { path: '^src/(cache|data|server|cli)/' },
    },
    {
      name: 'libraries-import-no-plane',
      comment: 'table/, json/, ipc/ and protocol/ are shared by every plane, so they import none of them.',
      severity: 'error',
      from: { path: '^src/(table|json|ipc|protocol|sql)/' },
      to: { path: PLANES },
    },
    {
      name: 'json-imports-protocol-and-table',
      comment: 'JSON for Arrow needs the wire literals, the Arrow side of tables and the error catalogue; nothing else of ours.',
      severity: 'error',
      from: { path: '^src/json/' },
      to: { path: '^src/', pathNot: '^src/(json/|protocol/|table/|errors\\.ts$)' },
    },
    {
      name: 'protocol-imports-only-errors',
      comment: 'The wire contract stands alone: nothing of ours but the error catalogue.',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { path: '^src/', pathNot: '^src/(protocol/|errors\\.ts$)' },
    },
    {
      name: 'no-plane-imports-a-root',
      comment: 'Only server/ and cli/ wire planes together; nothing below them imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(server|cli)/|^src/index\\.ts$' },
      to: { path: '^src/(server|cli)/' },
    },
    {
      name: 'frameworks-only-in-adapters',
      comment: 'Agent frameworks are optional peers (s2sp/ai-sdk, s2sp/langchain, s2sp/claude-agent-sdk): the core never imports them.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/agent/adapters/' },
      to: { path: 'node_modules/(ai|@ai-sdk|@langchain|langchain|@anthropic-ai)/' },
    },
    {
      name: 'telemetry-imports-no-plane',
      comment: 'Every plane records spans through telemetry/, so it imports none of them (only the optional-import helper).',
      severity: 'error',
      from: { path: '^src/telemetry/' },
      to: { path: '^src/', pathNot: '^src/(telemetry/|optional-import\\.ts$)' },
    },
    {
      name: 'otel-sdk-only-in-cli',
      comment: "The library speaks only @opentelemetry/api (an optional peer); choosing an SDK and exporters is the host's, or the CLI's.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: 'node_modules/@opentelemetry/(sdk-|exporter-|resources|core)' },
    },
    {
      name: 'src-not-tests',
      comment: 'Test and benchmark hooks do not live in src/ (DESIGN.md, "Style").',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};

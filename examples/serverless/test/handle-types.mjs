// Async resource types that can keep work going (see resources.ts); shared with invoke-fresh.mjs.
export const handleTypes = new Set([
  'Timeout',
  'Immediate',
  'TCPWRAP',
  'TCPCONNECTWRAP',
  'TCPSERVERWRAP',
  'PIPEWRAP',
  'PIPECONNECTWRAP',
  'TLSWRAP',
  'UDPWRAP',
  'HTTPCLIENTREQUEST',
  'HTTPINCOMINGMESSAGE',
  'GETADDRINFOREQWRAP',
  'PROCESSWRAP',
  'SIGNALWRAP',
  'FSEVENTWRAP',
  'STATWATCHER',
]);

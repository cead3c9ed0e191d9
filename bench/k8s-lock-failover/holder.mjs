// The lock holder process for run.mjs: acquires the Lease lock, reports its fencing token, and keeps
// renewing until the parent kills it with SIGKILL.
const { createMuster } = await import('@muster/core');
const muster = await createMuster({
  lock: { adapter: 'kubernetes', options: { kubeconfig: process.env.KUBECONFIG, namespace: 'default', holder: 'bench-holder' } },
});
const lease = await muster.lock.acquire(process.env.LOCK_NAME, { ttl: Number(process.env.TTL), wait: 120_000 });
process.send({ token: String(lease.token) });
setInterval(() => {}, 1000); // stay alive; the lease renews in the background

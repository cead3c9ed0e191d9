// The lock holder process for run.mjs: acquires the lock, reports its fencing token, and keeps
// renewing until the parent kills it with SIGKILL.
const { createMuster } = await import('@muster/core');
const muster = await createMuster({
  lock: {
    adapter: 'consul',
    options: { address: process.env.CONSUL_HTTP_ADDR, minSessionTtl: '1s', lockDelay: Number(process.env.LOCK_DELAY) },
  },
});
const lease = await muster.lock.acquire(process.env.LOCK_NAME, { ttl: Number(process.env.TTL), wait: 120_000 });
process.send({ token: String(lease.token) });
setInterval(() => {}, 1000); // stay alive; the lease renews in the background

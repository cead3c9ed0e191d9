// Which driver errors leave a fenced write's outcome open: the batch may have been applied (or may
// still be, by the next Paxos round on the partition). Read from the error's fields, so nothing here
// loads the driver.
const WRITE_TIMEOUT = 0x1100;
const WRITE_FAILURE = 0x1500;
const CAS_WRITE_UNKNOWN = 0x1700;
const OVERLOADED = 0x1001;

interface DriverErrorFields {
  code?: number;
  name?: string;
  isSocketError?: boolean;
  requestNotWritten?: boolean;
  innerErrors?: Record<string, unknown>;
}

/**
 * True when Cassandra may have applied the batch although the driver reports a failure:
 * - any WriteTimeout or WriteFailure: writeType CAS when Paxos did not learn whether its proposal was
 *   accepted, SIMPLE when the commit of an accepted proposal timed out (Paxos v1 commits with that
 *   type; the next round on the partition completes it); or CAS_WRITE_UNKNOWN (protocol v5);
 * - Overloaded: Cassandra sends it before executing anything, but the Muster CQL proxy answers it for a
 *   request it forwarded whose backend answer did not come within its requestTimeout (Cassandra may
 *   well have applied it), and a client cannot tell the two apart; a needless read-back is cheap;
 * - the driver's own read timeout (OperationTimedOutError): the request was sent, no answer came;
 * - a socket error after the request was written (the driver sets `requestNotWritten` only for
 *   requests still in its write queue): the connection closed while the answer was on its way;
 * - a NoHostAvailableError whose attempts include one of the above (the driver retried an
 *   idempotent batch on other hosts, or its speculative execution ran, and every attempt failed).
 */
export function isOutcomeUnknown(error: unknown, depth = 0): boolean {
  const e = (error ?? {}) as DriverErrorFields;
  if (e.code === WRITE_TIMEOUT || e.code === WRITE_FAILURE) return true;
  if (e.code === CAS_WRITE_UNKNOWN || e.code === OVERLOADED || e.name === 'OperationTimedOutError') return true;
  if (e.isSocketError === true && e.requestNotWritten !== true) return true;
  if (e.name === 'NoHostAvailableError' && e.innerErrors && depth < 2) {
    return Object.values(e.innerErrors).some((inner) => isOutcomeUnknown(inner, depth + 1));
  }
  return false;
}

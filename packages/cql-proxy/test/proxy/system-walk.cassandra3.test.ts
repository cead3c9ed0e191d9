// Issue 12, 3: no system table or DESCRIBE answer shows a real node, with three real addresses,
// host ids and tokens to find (127.0.0.1-3; the proxy is on 127.0.0.50).
import { systemWalk } from './system-walk.js';

systemWalk('cassandra3', 3);

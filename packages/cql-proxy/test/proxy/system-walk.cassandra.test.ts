// Issue 12, 3: no system table or DESCRIBE answer shows the real node (single-node testenv Cassandra).
import { systemWalk } from './system-walk.js';

systemWalk('cassandra', 1);

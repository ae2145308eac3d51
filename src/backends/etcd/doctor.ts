// dlock doctor on etcd: each endpoint's version, leader and alarms, auth, and the lease minimum.
export { doctor } from './doctor/run.js';

// Every subpath's declarations, imported whole, so that the compiler checks each of them
// (skipLibCheck: false) in a project without the DOM lib. Compile-time only.
import * as root from 'ebb';
import * as clients from 'ebb/clients';
import * as http from 'ebb/http';
import * as middleware from 'ebb/middleware';
import * as rate from 'ebb/rate';
import * as redis from 'ebb/redis';
import * as resilience from 'ebb/resilience';
import * as sim from 'ebb/sim';
import * as undici from 'ebb/undici';

export const subpaths = [root, http, rate, redis, resilience, sim, undici, clients, middleware];

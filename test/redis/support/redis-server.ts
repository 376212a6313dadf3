// The redis-server starter of test/redis, for TypeScript tests: the code is in redis-server.mjs
// (plain JavaScript, so `npm run bench -- redis` starts its server with it too).
export {
  freeClusterPort,
  freePort,
  haveRedis,
  REDIS_CLI,
  REDIS_SERVER,
  type RedisServer,
  startRedis,
} from './redis-server.mjs';

export { listen, type Listening } from './listen.js';

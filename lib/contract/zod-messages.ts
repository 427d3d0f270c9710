/**
 * English messages for zod issues. zod/mini, which the contract's schemas use (a fraction of
 * classic zod's size and import time), loads no locale: without this every issue says only
 * "Invalid input". Imported for this effect by the modules that build schemas.
 */
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

z.config(en());

/* explain.c: placeholder, filled below */

/* The sibling library: found only through the new $ORIGIN entry. */
int sib_value(void) { return 42; }

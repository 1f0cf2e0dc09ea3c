#!/bin/sh
grep -qx 'result = 2' calc.txt

#!/bin/sh
grep -qx '2.0' version.txt

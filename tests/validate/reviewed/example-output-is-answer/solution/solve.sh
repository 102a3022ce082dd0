#!/bin/bash
awk '$8 == 500' /app/access.log | wc -l > /app/errors.txt

#!/bin/bash
echo 'LOG_LEVEL=debug' >> /app/.env
